/**
 * The one API client of the application and the session's state.
 *
 * Every call to /v1 goes through `client` (@flipbook/client, typed from the
 * OpenAPI document) and is unwrapped by `call`, which turns the error
 * envelope `{ error: { message, type, details? } }` into a `Problem` the
 * screens show in words. Writes carry the session's CSRF token.
 */
import { computed, signal } from '@preact/signals';
import { createFlipbookClient, type paths } from '@flipbook/client';

type JsonOf<R> = R extends { content: { 'application/json': infer J } } ? J : never;
type Responses<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: infer R } ? R : never;
/** The `data` of an operation's success answer, e.g. `DataOf<'/v1/account', 'get'>`. */
export type DataOf<P extends keyof paths, M extends keyof paths[P], S extends keyof Responses<P, M> = 200 & keyof Responses<P, M>> =
  JsonOf<Responses<P, M>[S]> extends { data: infer D } ? D : never;

export type Account = DataOf<'/v1/account', 'get'>;
export type Workspace = NonNullable<Account['active_workspace']>;
/** viewer < editor < admin < owner (the API sends the role as a string). */
export type Role = 'viewer' | 'editor' | 'admin' | 'owner';

/** An API error (or a network failure, status 0) in the words the API gave. */
export interface Problem {
  status: number;
  type: string;
  message: string;
  /** Field → messages, as the envelope's `details`. */
  details: Record<string, string[]>;
  /** From Retry-After on a 429. */
  retryAfterSeconds: number | null;
}

export type Result<T> = { ok: true; data: T } | { ok: false; problem: Problem };

/** The signed-in person: undefined until GET /v1/account has answered, null when signed out. */
export const account = signal<Account | null | undefined>(undefined);
/** Why the account could not be read (not a 401: the service failed or could not be reached). */
export const accountProblem = signal<Problem | null>(null);

/**
 * A person is waiting on every call: the client retries a network failure or
 * a short wait (a 503, a 429 due within 2 s) and hands any longer 429 back at
 * once, so the screen says how long to wait instead of hanging.
 */
export const client = createFlipbookClient({ csrfToken: () => account.value?.csrf_token, maxRetryDelayMs: 2000 });

export const ROLES: readonly Role[] = ['viewer', 'editor', 'admin', 'owner'];
export const rank = (role: string | undefined): number => (role ? (ROLES as readonly string[]).indexOf(role) : -1);
export const role = computed(() => account.value?.active_workspace?.role as Role | undefined);
/** Admins and owners manage members, invitations and API keys. */
export const managesPeople = computed(() => rank(role.value) >= rank('admin'));
/** The roles this person may give (nobody grants a role above their own). */
export const grantableRoles = computed<readonly Role[]>(() => ROLES.filter((r) => rank(r) <= rank(role.value)));

export function problemOf(response: Response | undefined, body: unknown): Problem {
  const error = (body as { error?: { message?: unknown; type?: unknown; details?: unknown } } | undefined)?.error;
  const status = response?.status ?? 0;
  const retry = Number(response?.headers.get('retry-after'));
  return {
    status,
    type: typeof error?.type === 'string' ? error.type : 'UnknownError',
    message: typeof error?.message === 'string' ? error.message : `The service answered with an unexpected error (HTTP ${status}). Please try again.`,
    details: error?.details && typeof error.details === 'object' ? (error.details as Record<string, string[]>) : {},
    retryAfterSeconds: status === 429 && Number.isFinite(retry) && retry > 0 ? retry : null,
  };
}

const NETWORK_PROBLEM: Problem = {
  status: 0,
  type: 'NetworkError',
  message: 'The service could not be reached. Check your connection and try again.',
  details: {},
  retryAfterSeconds: null,
};

/**
 * Awaits a client call and unwraps `{ data }`, or the error envelope. A 401
 * while signed in means the session ended (signed out elsewhere, expired):
 * the person is then signed out here too, and the screens go to sign-in.
 */
export async function call<D>(request: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<Result<D extends { data: infer T } ? T : undefined>> {
  type T = D extends { data: infer T } ? T : undefined;
  try {
    const { data, error, response } = await request;
    if (response.ok) return { ok: true, data: (data as { data?: T } | undefined)?.data as T };
    if (response.status === 401 && account.value) account.value = null;
    return { ok: false, problem: problemOf(response, error) };
  } catch {
    return { ok: false, problem: NETWORK_PROBLEM };
  }
}

let reading: Promise<void> | null = null;

/** Reads the account (once at a time): at start, and after a failure when asked again. */
export function loadAccount(): Promise<void> {
  reading ??= (async () => {
    accountProblem.value = null;
    const result = await call(client.GET('/v1/account'));
    if (result.ok) account.value = result.data;
    else if (result.problem.status === 401) account.value = null;
    else accountProblem.value = result.problem;
  })().finally(() => {
    reading = null;
  });
  return reading;
}

/** A sign-in answered with the account: the session starts here. */
export function signedIn(data: Account): void {
  accountProblem.value = null;
  account.value = data;
}
