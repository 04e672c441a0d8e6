/**
 * Where files live: a directory under DATA_DIR, or an S3-compatible bucket.
 * Keys are slash-separated paths ("books/ab12/pages/1-1024.webp"). Writes
 * stream; nothing is held whole in memory. Public assets are written once
 * under keys that never change meaning, so they can be cached forever.
 */
import type { Readable } from 'node:stream';

export interface StoredObject {
  key: string;
  size: number;
}

export interface ObjectInfo {
  size: number;
  contentType: string | undefined;
}

export interface Storage {
  readonly kind: 'local' | 's3';
  /** Streams `body` to `key`; replaces any object there. */
  put(key: string, body: Readable | Buffer, options?: { contentType?: string }): Promise<StoredObject>;
  /** A stream of the object, or null when there is none. */
  get(key: string): Promise<{ body: Readable; info: ObjectInfo } | null>;
  stat(key: string): Promise<ObjectInfo | null>;
  delete(key: string): Promise<void>;
  /** Removes every object whose key starts with `prefix` (which should end with "/"). */
  deletePrefix(prefix: string): Promise<number>;
  list(prefix: string): Promise<string[]>;
  /** A direct public URL when the back end serves files itself (S3 with a public base URL); otherwise null. */
  directUrl(key: string): string | null;
  /** Throws when the back end cannot be reached or written (readiness): the directory, or the bucket. */
  check(): Promise<void>;
}

const SAFE_KEY = /^(?!\/)(?!.*\/\/)(?!.*(^|\/)\.\.?(\/|$))[A-Za-z0-9._\-/]+$/;

/** Refuses keys that could escape the storage root or confuse a back end. */
export function assertSafeKey(key: string): void {
  if (!SAFE_KEY.test(key) || key.length > 1024) throw new Error(`Unsafe storage key: ${JSON.stringify(key)}`);
}

const CONTENT_TYPES: Record<string, string> = {
  webp: 'image/webp',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  pdf: 'application/pdf',
  json: 'application/json',
  svg: 'image/svg+xml',
  mp3: 'audio/mpeg',
  css: 'text/css',
  js: 'text/javascript',
};

export function contentTypeFor(key: string): string {
  const ext = key.slice(key.lastIndexOf('.') + 1).toLowerCase();
  return CONTENT_TYPES[ext] ?? 'application/octet-stream';
}
