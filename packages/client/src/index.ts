/**
 * @flipbook/client: a typed client for the Flipbook API v1. The types are
 * generated from the service's OpenAPI document (src/schema.d.ts, by
 * openapi-typescript); requests go through openapi-fetch. This file is the
 * thin hand-written layer on top: authentication, the session's CSRF header,
 * an Idempotency-Key on every write, and retries.
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { isSafeMethod, randomKey, retryingFetch, type FetchLike, type RetryOptions } from './retry.ts';
import type { paths, components, operations, webhooks } from './schema.d.ts';

export type { paths, components, operations, webhooks };
export { FlipbookApiError, isFlipbookApiError, unwrap, type ApiErrorType, type FlipbookErrorType, type ResultLike } from './errors.ts';
export { toFormData } from './form-data.ts';
export { paginate, type CursorListPath, type ListItem, type ListParams, type PaginateOptions } from './paginate.ts';
export { FlipbookBatchError, uploadAndWait, type Book, type UploadAndWaitOptions, type UploadBatch, type UploadFields, type UploadResult } from './uploads.ts';
export { verifyWebhook, WebhookVerificationError, type VerifyWebhookOptions, type WebhookEvent, type WebhookHeaders } from './webhooks.ts';
export type { RetryInfo, RetryOptions } from './retry.ts';

export interface FlipbookClientOptions extends RetryOptions {
  /** Where the service runs, without `/v1` (e.g. `https://flipbook.example.com`). Default: the page's origin in a browser. */
  baseUrl?: string;
  /**
   * A workspace API key (`wsk_…`) or an OAuth access token, sent as `Authorization: Bearer`; a function is called
   * before each request (to hand out a refreshed access token). Omit it in the application, which signs in with a session cookie.
   */
  token?: string | (() => string | null | undefined | Promise<string | null | undefined>);
  /**
   * The session's CSRF token, sent as `X-CSRF-Token` on every write made with
   * the session cookie (the application reads it from `GET /v1/account`).
   */
  csrfToken?: () => string | null | undefined;
  /** Send an `Idempotency-Key` (a new UUID per call, the same on its retries) with every POST, PUT, PATCH and DELETE that has none (default true). */
  idempotencyKeys?: boolean;
  /** A fetch implementation (default: the global one). */
  fetch?: FetchLike;
}

export type FlipbookClient = Client<paths>;

export function createFlipbookClient(options: FlipbookClientOptions = {}): FlipbookClient {
  const baseUrl = options.baseUrl ?? (typeof location === 'undefined' ? undefined : location.origin);
  const send: FetchLike = options.fetch ?? ((request) => globalThis.fetch(request));
  const client = createClient<paths>({
    baseUrl,
    // Retries happen below the middleware, so every attempt of one call carries the same headers (and Idempotency-Key).
    fetch: retryingFetch(send, options),
    // The session cookie goes with same-origin requests only.
    credentials: 'same-origin',
  });
  const conventions: Middleware = {
    async onRequest({ request }) {
      const token = typeof options.token === 'function' ? await options.token() : options.token;
      if (token && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`);
      if (!isSafeMethod(request.method)) {
        const csrf = options.csrfToken?.();
        if (csrf) request.headers.set('x-csrf-token', csrf);
        if (options.idempotencyKeys !== false && !request.headers.has('idempotency-key')) request.headers.set('idempotency-key', randomKey());
      }
      return request;
    },
  };
  client.use(conventions);
  return client;
}
