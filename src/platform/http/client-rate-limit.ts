/**
 * Rate limits for public endpoints (the reader's search, the access gate,
 * reader events), counted in the same shared store as the API's limits.
 * Client addresses are never kept: the counter key holds a salted hash of
 * the IP, so the store cannot be read back into addresses.
 */
import { createHash, createHmac } from 'node:crypto';
import type { RateLimitStore } from './rate-limit-store.ts';

export interface LimitRule {
  /** A stable name for the counter ("gate:42:client", "search"). */
  bucket: string;
  max: number;
  windowMs: number;
}

export class ClientRateLimiter {
  private readonly store: RateLimitStore;
  private readonly salt: string;

  /** `secret`: the service's signing key; the salt is derived from it, so it differs from every other use. */
  constructor(store: RateLimitStore, secret: string) {
    this.store = store;
    this.salt = createHmac('sha256', secret).update('flipbook rate-limit keys v1').digest('base64url');
  }

  /** The counter-key form of a client address. */
  clientKey(ip: string): string {
    return createHash('sha256').update(`${this.salt}:${ip}`).digest('base64url').slice(0, 22);
  }

  /**
   * Counts one hit against each rule (`subject` distinguishes who is
   * counted: a hashed client, an address, a session). Returns the seconds
   * to wait when any rule is exceeded, else null.
   */
  async hit(rules: (LimitRule & { subject: string })[], now = Date.now()): Promise<number | null> {
    let wait: number | null = null;
    // All rules at once: a coalescing store then counts them in one round trip, not one per rule.
    const windows = rules.map((rule) => Math.floor(now / rule.windowMs) * rule.windowMs);
    const counts = await Promise.all(rules.map((rule, i) => this.store.hit([`${rule.bucket}:${rule.subject}`], windows[i]!, rule.windowMs)));
    rules.forEach((rule, i) => {
      if (counts[i]![0]! > rule.max) wait = Math.max(wait ?? 0, Math.ceil((windows[i]! + rule.windowMs - now) / 1000));
    });
    return wait;
  }
}
