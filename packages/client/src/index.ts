/**
 * @flipbook/client: a typed client for the Flipbook API v1. The types are
 * generated from the service's OpenAPI document (src/schema.d.ts, by
 * openapi-typescript); requests go through openapi-fetch. This file is the
 * thin hand-written layer on top.
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths, components } from './schema.d.ts';

export type { paths, components };

export interface FlipbookClientOptions {
  /** Where the service runs, without `/v1` (e.g. `https://flipbook.example.com`). Default: the page's origin in a browser. */
  baseUrl?: string;
  /** A workspace API key (`wsk_…`) or an OAuth access token, sent as `Authorization: Bearer`. Omit it in the application, which signs in with a session cookie. */
  token?: string;
  /**
   * The session's CSRF token, sent as `X-CSRF-Token` on every write made with
   * the session cookie (the application reads it from `GET /v1/account`).
   */
  csrfToken?: () => string | null | undefined;
  /** A fetch implementation (default: the global one). */
  fetch?: (input: Request) => Promise<Response>;
}

export type FlipbookClient = Client<paths>;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function createFlipbookClient(options: FlipbookClientOptions = {}): FlipbookClient {
  const baseUrl = options.baseUrl ?? (typeof location === 'undefined' ? undefined : location.origin);
  const client = createClient<paths>({
    baseUrl,
    fetch: options.fetch,
    headers: options.token ? { authorization: `Bearer ${options.token}` } : undefined,
    // The session cookie goes with same-origin requests only.
    credentials: 'same-origin',
  });
  const auth: Middleware = {
    onRequest({ request }) {
      const csrf = options.csrfToken?.();
      if (csrf && !SAFE_METHODS.has(request.method)) request.headers.set('x-csrf-token', csrf);
      return request;
    },
  };
  client.use(auth);
  return client;
}
