/**
 * Errors as values the caller can branch on: every failure the API answers
 * with is `{ error: { message, type, details? } }`, and `type` is stable
 * (the message may change). `unwrap` turns an openapi-fetch result into its
 * data or throws a `FlipbookApiError`.
 */
import type { components } from './schema.d.ts';

/** Every `type` the API documents in its error envelope (ValidationException, RateLimitException, …). */
export type ApiErrorType = components['schemas']['ErrorEnvelope']['error']['type'];

/** An answer that is not the API's envelope (a proxy's HTML page, an empty body). */
export type FlipbookErrorType = ApiErrorType | 'UnexpectedResponse';

export class FlipbookApiError<T extends FlipbookErrorType = FlipbookErrorType> extends Error {
  override name = 'FlipbookApiError';
  /** The HTTP status. */
  readonly status: number;
  /** The envelope's stable error type; `UnexpectedResponse` when the body was not the envelope. */
  readonly type: T;
  /** Field → messages (validation), or the facts behind the error (scopes, plan); `{}` when none. */
  readonly details: Record<string, string[]>;
  /** The service's `X-Request-Id`, to quote when reporting a problem. */
  readonly requestId: string | null;
  /** Seconds the service asked to wait (`Retry-After`), when it said. */
  readonly retryAfter: number | null;
  readonly response: Response;

  constructor(response: Response, body: unknown) {
    const envelope = isEnvelope(body) ? body.error : null;
    super(envelope?.message ?? `The API answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''} without an error envelope.`);
    this.status = response.status;
    this.type = (envelope?.type ?? 'UnexpectedResponse') as T;
    this.details = envelope?.details ?? {};
    this.requestId = response.headers.get('x-request-id');
    this.retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
    this.response = response;
  }

  /** Narrows to one error type: `if (error.is('ValidationException')) error.details.name`. */
  is<U extends FlipbookErrorType>(type: U): this is FlipbookApiError<U> {
    return (this.type as FlipbookErrorType) === type;
  }
}

export function isFlipbookApiError<U extends FlipbookErrorType = FlipbookErrorType>(error: unknown, type?: U): error is FlipbookApiError<U> {
  return error instanceof FlipbookApiError && (type === undefined || error.type === type);
}

interface Envelope {
  error: { message: string; type: ApiErrorType; details?: Record<string, string[]> };
}

function isEnvelope(body: unknown): body is Envelope {
  if (!body || typeof body !== 'object' || !('error' in body)) return false;
  const error = (body as { error: unknown }).error;
  return !!error && typeof error === 'object' && typeof (error as { type?: unknown }).type === 'string' && typeof (error as { message?: unknown }).message === 'string';
}

/** `Retry-After` in seconds (a number of seconds or an HTTP date), or null. */
export function retryAfterSeconds(header: string | null): number | null {
  if (header === null || header.trim() === '') return null;
  if (/^\s*\d+\s*$/.test(header)) return Number(header);
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** What openapi-fetch resolves to: `data` on a 2xx, `error` otherwise, and the response. */
export interface ResultLike {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/**
 * The data of a successful call, or a thrown `FlipbookApiError`:
 * `const { data: book } = await unwrap(client.GET('/v1/books/{book}', { params: { path: { book: id } } }))`.
 */
export async function unwrap<R extends ResultLike>(result: R | Promise<R>): Promise<Exclude<R['data'], undefined>> {
  const settled = await result;
  if (!settled.response.ok) throw new FlipbookApiError(settled.response, settled.error);
  return settled.data as Exclude<R['data'], undefined>;
}
