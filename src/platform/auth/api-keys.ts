/**
 * Workspace API keys: `wsk_live_…` / `wsk_test_…` followed by 43 base62
 * characters (256 random bits). Only a SHA-256 hash is stored; a key is found
 * by its first 12 random characters and then compared in constant time.
 * A fast hash is right here: the keys are random, not passwords.
 */
import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';

export type KeyMode = 'live' | 'test';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 43;
const LOOKUP_LENGTH = 12;
const KEY_PATTERN = /^wsk_(live|test)_([0-9A-Za-z]{43})$/;

function base62(bytes: Buffer, length: number): string {
  let value = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (out.length < length) {
    out = ALPHABET[Number(value % 62n)]! + out;
    value /= 62n;
  }
  return out;
}

export interface GeneratedKey {
  plain: string;
  lookupId: string;
  secretHash: string;
}

export function generateApiKey(mode: KeyMode): GeneratedKey {
  const random = base62(randomBytes(32), RANDOM_LENGTH);
  const plain = `wsk_${mode}_${random}`;
  return { plain, lookupId: random.slice(0, LOOKUP_LENGTH), secretHash: hashKey(plain) };
}

export function hashKey(plain: string): string {
  return createHash('sha256').update(plain).digest('hex');
}

/** Splits a presented key into its parts, or null when it cannot be one of ours. */
export function parseApiKey(presented: string): { mode: KeyMode; lookupId: string } | null {
  const match = KEY_PATTERN.exec(presented);
  if (!match) return null;
  return { mode: match[1] as KeyMode, lookupId: match[2]!.slice(0, LOOKUP_LENGTH) };
}

export function keyMatches(presented: string, storedHash: string): boolean {
  return keyMatchesHash(presented, Buffer.from(storedHash, 'hex'));
}

/** keyMatches() against the stored hash as bytes, in constant time. */
export function keyMatchesHash(presented: string, storedHash: Buffer): boolean {
  // The one-shot hash: no Hash object per request (this runs on every authenticated request).
  const a = hash('sha256', presented, 'buffer');
  return a.length === storedHash.length && timingSafeEqual(a, storedHash);
}

/** What may be shown of a key after creation: its prefix and first characters. */
export function displayPrefix(mode: string, lookupId: string): string {
  return `wsk_${mode}_${lookupId.slice(0, 6)}…`;
}
