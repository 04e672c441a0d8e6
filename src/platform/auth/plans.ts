/**
 * What each plan allows. The spec names only the Company plan (analytics and
 * most exports); the rest is our decision, shown to clients in GET /me.
 */
export const PLANS = ['free', 'pro', 'company'] as const;
export type Plan = (typeof PLANS)[number];

export const FEATURES = {
  analytics: { description: 'Reader analytics operations (/analytics/*)', plans: ['company'] },
  exports: { description: 'Analytics CSV exports (the leads export is on every plan)', plans: ['company'] },
  remove_made_with_badge: { description: 'Hide the "made with" badge on flipbooks', plans: ['pro', 'company'] },
  brand: { description: 'Workspace brand (logo, colors, social links)', plans: ['pro', 'company'] },
  take_over_branding: { description: "Replace the service's branding with the workspace brand on every public flipbook", plans: ['company'] },
} as const satisfies Record<string, { description: string; plans: readonly Plan[] }>;

export type Feature = keyof typeof FEATURES;

export function isPlan(value: string): value is Plan {
  return (PLANS as readonly string[]).includes(value);
}

export function planAllows(plan: string, feature: Feature): boolean {
  return (FEATURES[feature].plans as readonly string[]).includes(plan);
}

/** The cheapest plan that has the feature, for error messages. */
export function minimumPlanFor(feature: Feature): Plan {
  return PLANS.find((p) => planAllows(p, feature))!;
}

const featuresByPlan = new Map<string, Readonly<Record<Feature, boolean>>>();

/** What a plan allows, feature by feature (computed once per plan: GET /v1/me answers it on every call). */
export function featuresOf(plan: string): Readonly<Record<Feature, boolean>> {
  let features = featuresByPlan.get(plan);
  if (!features) {
    features = Object.freeze(Object.fromEntries(Object.keys(FEATURES).map((f) => [f, planAllows(plan, f as Feature)])) as Record<Feature, boolean>);
    featuresByPlan.set(plan, features);
  }
  return features;
}
