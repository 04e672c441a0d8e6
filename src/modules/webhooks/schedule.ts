/**
 * When a failed delivery is tried again. Standard Webhooks' suggested
 * schedule (immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h after
 * each failure), continued with three more 10-hour intervals so a delivery is
 * tried for about three days, as Stripe does: 11 attempts over 2 days 19.6 h.
 * Each delay gets ±10 % jitter, so the retries of many deliveries that failed
 * together (an endpoint that was down) do not all arrive at the same instant.
 */
const S = 1000;
const M = 60 * S;
const H = 60 * M;

/** Delay before attempt n+2 after attempt n+1 failed (index n). */
export const RETRY_DELAYS_MS = [5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 10 * H, 10 * H, 10 * H, 10 * H] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
export const JITTER = 0.1;
/** A subscription whose every attempt failed for this long is deactivated. */
export const FAILING_DEACTIVATION_MS = 5 * 24 * H;
/** The longest Retry-After honoured (a longer one waits this long). */
export const MAX_RETRY_AFTER_MS = 24 * H;

/** The delay after the failed attempt at this schedule step (0 = the first attempt), or null when none is left. */
export function retryDelay(step: number, random: () => number = Math.random): number | null {
  const base = RETRY_DELAYS_MS[step];
  if (base === undefined) return null;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}

/** Retry-After in ms (delta-seconds or an HTTP date), or null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return null;
  const trimmed = raw.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed) * S, MAX_RETRY_AFTER_MS);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  return Math.min(Math.max(0, date - now), MAX_RETRY_AFTER_MS);
}
