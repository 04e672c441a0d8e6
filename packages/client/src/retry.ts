/**
 * Retries around fetch: a network error, 429 or 503 (and the 409 a write gets
 * while its earlier attempt still runs under the same Idempotency-Key) is
 * tried again after `Retry-After`, or after an exponential backoff with
 * jitter. A write is retried only when it carries an Idempotency-Key, which
 * the client adds to every write, so a retry never does the work twice: the
 * service replays the first answer.
 */
import { retryAfterSeconds } from './errors.ts';

export type FetchLike = (input: Request) => Promise<Response>;

export interface RetryInfo {
  /** The attempt that failed: 1 for the first. */
  attempt: number;
  /** How long the client waits before the next attempt. */
  delayMs: number;
  /** The status that was answered, or null for a network error. */
  status: number | null;
  error?: unknown;
  request: Request;
}

export interface RetryOptions {
  /** Attempts after the first (default 2); 0 turns retries off. */
  maxRetries?: number;
  /** The first backoff, doubled at each retry, with jitter (default 500 ms). */
  retryDelayMs?: number;
  /** The longest wait; an answer asking for longer (`Retry-After`) is returned instead of retried (default 60 000 ms). */
  maxRetryDelayMs?: number;
  /** Called before each wait: for logs and metrics. */
  onRetry?: (info: RetryInfo) => void;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function isSafeMethod(method: string): boolean {
  return SAFE_METHODS.has(method.toUpperCase());
}

function retriableStatus(response: Response): boolean {
  if (response.status === 429 || response.status === 503) return true;
  // IdempotencyInProgressException: the same key is still being processed (an earlier attempt whose answer was lost).
  return response.status === 409 && response.headers.has('retry-after');
}

/** fetch throws a TypeError for a network failure (refused, reset, DNS), an AbortError/TimeoutError when aborted. */
function isNetworkError(error: unknown): boolean {
  return error instanceof TypeError;
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function retryingFetch(send: FetchLike, options: RetryOptions = {}): FetchLike {
  const maxRetries = Math.max(0, options.maxRetries ?? 2);
  const baseDelay = options.retryDelayMs ?? 500;
  const maxDelay = options.maxRetryDelayMs ?? 60_000;
  // Equal jitter: half the exponential delay, plus up to as much again at random (clients that failed together spread out).
  const backoff = (attempt: number) => {
    const exponential = Math.min(maxDelay, baseDelay * 2 ** (attempt - 1));
    return Math.round(exponential / 2 + Math.random() * (exponential / 2));
  };

  return async (request) => {
    const retriable = maxRetries > 0 && (isSafeMethod(request.method) || request.headers.has('idempotency-key'));
    for (let attempt = 1; ; attempt++) {
      const last = !retriable || attempt > maxRetries;
      // A body can be read once: every attempt but the last sends a clone, keeping the original for the next.
      const sending = last ? request : request.clone();
      let response: Response;
      try {
        response = await send(sending);
      } catch (error) {
        if (last || request.signal.aborted || !isNetworkError(error)) throw error;
        const delayMs = backoff(attempt);
        options.onRetry?.({ attempt, delayMs, status: null, error, request });
        await sleep(delayMs, request.signal);
        continue;
      }
      if (last || !retriableStatus(response)) return response;
      const asked = retryAfterSeconds(response.headers.get('retry-after'));
      const delayMs = asked === null ? backoff(attempt) : asked * 1000;
      if (delayMs > maxDelay) return response;
      await response.body?.cancel().catch(() => undefined);
      options.onRetry?.({ attempt, delayMs, status: response.status, request });
      await sleep(delayMs, request.signal);
    }
  };
}

/** A v4 UUID: crypto.randomUUID where it exists (browsers only offer it in secure contexts), else from getRandomValues. */
export function randomKey(): string {
  const crypto = globalThis.crypto;
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
