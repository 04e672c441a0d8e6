/**
 * Verifies a webhook the service sent, as Standard Webhooks defines it
 * (https://www.standardwebhooks.com): `webhook-signature` holds one or more
 * space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under the
 * subscription's secret (`whsec_` + base64 key bytes; two signatures for a
 * day after a rotation), and `webhook-timestamp` must be within the
 * tolerance of now, so an old delivery cannot be replayed. WebCrypto only:
 * runs in browsers, workers, Deno, Bun and Node 20+.
 */
import type { webhooks } from './schema.d.ts';

/** The body of every event the service documents, discriminated by `type`. */
export type WebhookEvent = {
  [E in keyof webhooks]: webhooks[E] extends { post: { requestBody: { content: { 'application/json': infer Body } } } } ? Body : never;
}[keyof webhooks];

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

/** A Fetch `Headers`, or a plain object of headers (Node's `request.headers`, any case). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** Largest distance between `webhook-timestamp` and now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The current time (default: now). */
  now?: Date;
}

const encoder = new TextEncoder();

function header(headers: WebhookHeaders, name: string): string | null {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(' ') : (value ?? null);
  }
  return null;
}

function base64Bytes(text: string): Uint8Array<ArrayBuffer> | null {
  try {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}

function bodyBytes(rawBody: string | ArrayBuffer | ArrayBufferView): Uint8Array {
  if (typeof rawBody === 'string') return encoder.encode(rawBody);
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody);
  return new Uint8Array(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
}

/**
 * The parsed payload of a genuine delivery, or a thrown WebhookVerificationError.
 * Pass the body exactly as received (the raw bytes or text, before any JSON parsing).
 */
export async function verifyWebhook<T = WebhookEvent>(
  headers: WebhookHeaders,
  rawBody: string | ArrayBuffer | ArrayBufferView,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<T> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header.');

  const seconds = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || !Number.isSafeInteger(seconds)) throw new WebhookVerificationError('Invalid webhook-timestamp header.');
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (seconds < now - tolerance) throw new WebhookVerificationError('The webhook timestamp is too old.');
  if (seconds > now + tolerance) throw new WebhookVerificationError('The webhook timestamp is too new.');

  const keyBytes = base64Bytes(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  if (!keyBytes || keyBytes.length === 0) throw new WebhookVerificationError('The secret is not a whsec_ base64 secret.');
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);

  const body = bodyBytes(rawBody);
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);

  for (const entry of signatures.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const signature = base64Bytes(entry.slice(comma + 1));
    // crypto.subtle.verify compares in constant time.
    if (signature && (await crypto.subtle.verify('HMAC', key, signature, signed))) {
      try {
        return JSON.parse(new TextDecoder().decode(body)) as T;
      } catch {
        throw new WebhookVerificationError('The webhook body is not JSON.');
      }
    }
  }
  throw new WebhookVerificationError('No matching signature found.');
}
