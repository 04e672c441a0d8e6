/** The scopes of spec part 5. `*` grants every scope. */
export const SCOPES = [
  'analytics:read',
  'books:read',
  'books:write',
  'brand:read',
  'brand:write',
  'catalogs:read',
  'catalogs:write',
  'exports:read',
  'subscribers:read',
  'subscribers:write',
  'tracked-links:read',
  'tracked-links:write',
  'webhooks:read',
  'webhooks:write',
  'workspace:write',
] as const;

export type Scope = (typeof SCOPES)[number];
export type GrantedScope = Scope | '*';

export function isGrantableScope(value: string): value is GrantedScope {
  return value === '*' || (SCOPES as readonly string[]).includes(value);
}

export function hasScope(granted: readonly string[], required: Scope): boolean {
  return granted.includes('*') || granted.includes(required);
}
