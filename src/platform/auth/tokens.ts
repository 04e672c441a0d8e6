/**
 * Random bearer tokens (session cookies, sign-in and invitation links): 256
 * random bits, base64url. Stored only as SHA-256, found by that hash: a fast
 * hash is right for random values (nothing to brute-force), and a lookup by
 * hash compares nothing in variable time.
 */
import { createHash, randomBytes } from 'node:crypto';

export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
