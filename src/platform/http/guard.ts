/**
 * The request guard, in one onRequest hook: who is calling (API key), how
 * much they may call (rate limits, spec part 8), and whether the key's scopes
 * and the workspace's plan allow the operation (spec part 5).
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { roleAtLeast } from '../auth/roles.ts';
import type { AccountsService, ResolvedSession } from '../../modules/people/accounts.service.ts';
import { hasScope } from '../auth/scopes.ts';
import { minimumPlanFor, planAllows, FEATURES } from '../auth/plans.ts';
import { ERRORS } from '../errors.ts';
import type { RateLimitStore } from './rate-limit-store.ts';
import type { WorkspacesService } from '../../modules/workspaces/workspaces.service.ts';
import { ACCESS_TOKEN_PREFIX, type OAuthService } from '../../modules/oauth/oauth.service.ts';
import type { AuthContext } from '../auth/auth-context.ts';
import { queryParameterName } from '../logger.ts';

export interface RateLimits {
  workspacePerMinute: number;
  endpointPerMinute: number;
  unauthenticatedPerMinute: number;
}

const WINDOW_MS = 60_000;

/**
 * A key sent as a percent-encoded spelling of `api_key` (`api%5Fkey`,
 * `%61pi_key`) is refused: the router decodes the name and would accept it,
 * but proxies, CDNs and log pipelines outside this service match the plain
 * name when they scrub URLs, so such a key would leak there.
 */
function refuseEncodedApiKeyName(url: string): void {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return;
  for (const pair of url.slice(queryStart + 1).split('&')) {
    const raw = pair.split('=', 1)[0]!;
    if (raw !== 'api_key' && queryParameterName(pair) === 'api_key') {
      throw ERRORS.badRequest('Spell the api_key query parameter plainly, without percent-encoding; better, send the key in the Authorization header.');
    }
  }
}

/** The presented key: the Authorization header, else the discouraged `api_key` query parameter. */
export function presentedKey(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return match ? match[1]! : null;
  }
  refuseEncodedApiKeyName(request.url);
  const query = request.query as Record<string, unknown> | undefined;
  const fromQuery = query?.api_key;
  return typeof fromQuery === 'string' && fromQuery ? fromQuery : null;
}

interface Bucket {
  key: string;
  limit: number;
}

/**
 * Counts the request in its buckets and sets the RateLimit headers; throws the
 * 429. Synchronous when the store answers synchronously (the in-memory store of
 * the embedded mode), else a promise: the guard runs once per request, and a
 * promise it does not need costs a microtask turn per request.
 */
function consume(store: RateLimitStore, reply: FastifyReply, buckets: Bucket[]): void | Promise<void> {
  const active = buckets.filter((b) => b.limit > 0);
  if (active.length === 0) return;
  const now = Date.now();
  const windowStart = Math.floor(now / WINDOW_MS) * WINDOW_MS;
  const counts = store.hit(active.map((b) => b.key), windowStart, WINDOW_MS);
  if (Array.isArray(counts)) return applyCounts(reply, active, counts, windowStart, now);
  return counts.then((c) => applyCounts(reply, active, c, windowStart, now));
}

function applyCounts(reply: FastifyReply, active: Bucket[], counts: number[], windowStart: number, now: number): void {
  // Report the bucket closest to its limit.
  let tightest = 0;
  let remaining = Infinity;
  active.forEach((bucket, i) => {
    const left = bucket.limit - counts[i]!;
    if (left < remaining) {
      remaining = left;
      tightest = i;
    }
  });
  const resetSeconds = Math.max(1, Math.ceil((windowStart + WINDOW_MS - now) / 1000));
  reply.header('ratelimit-limit', String(active[tightest]!.limit));
  reply.header('ratelimit-remaining', String(Math.max(0, remaining)));
  reply.header('ratelimit-reset', String(resetSeconds));
  if (remaining < 0) throw ERRORS.rateLimited(resetSeconds);
}

/** Runs `next` after `step`, without a promise when `step` finished synchronously. */
function then(step: void | Promise<void>, next: () => void | Promise<void>): void | Promise<void> {
  return step instanceof Promise ? step.then(next) : next();
}

/** The application's session cookie (HttpOnly, SameSite=Lax; see docs/people-and-teams.md). */
export const SESSION_COOKIE = 'flipbook_session';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A browser request made with the session cookie must come from the service's
 * own pages: its Origin (sent by browsers on every cross-origin request and
 * every POST) is the public origin or the request's own host, and Fetch
 * Metadata does not say cross-site. Requests without Origin (other clients
 * than browsers) carry no ambient cookie from elsewhere.
 */
export function assertSameOrigin(request: FastifyRequest, publicOrigin: string): void {
  if (request.headers['sec-fetch-site'] === 'cross-site') throw ERRORS.csrf('Cross-site requests cannot use the application\'s session.');
  const origin = request.headers.origin;
  if (origin === undefined) return;
  const own = `${request.protocol}://${request.host}`;
  if (origin !== publicOrigin && origin !== own) throw ERRORS.csrf('This request comes from another site; the application\'s session cannot be used from there.');
}

function assertCsrfToken(request: FastifyRequest, expected: string): void {
  const given = request.headers['x-csrf-token'];
  const a = Buffer.from(typeof given === 'string' ? given : '');
  const b = Buffer.from(expected);
  if (a.length !== b.length || !timingSafeEqual(a, b)) {
    throw ERRORS.csrf('Writes made with the application\'s session need the X-CSRF-Token header (csrf_token from GET /v1/account).');
  }
}

export interface GuardDependencies {
  workspaces: WorkspacesService;
  accounts: AccountsService;
  /** OAuth access tokens (`fbo_at_…`), accepted exactly as keys are. */
  oauth: OAuthService;
  /** PUBLIC_BASE_URL's origin: the application's pages are served from it. */
  publicOrigin: string;
  store: RateLimitStore;
  limits: RateLimits;
  /** The counter-key form of a client address (ClientRateLimiter.clientKey: a salted hash); the address itself is never a key. */
  clientKey: (ip: string) => string;
}

export function registerGuard(app: FastifyInstance, deps: GuardDependencies): void {
  const { workspaces, accounts, oauth, store, limits, clientKey, publicOrigin } = deps;
  const clientBucket = (request: FastifyRequest): Bucket => ({ key: `client:${clientKey(request.ip)}`, limit: limits.unauthenticatedPerMinute });
  app.decorateRequest('auth', null);
  app.decorateRequest('person', null);

  type Route = { config: FastifyContextConfig; url: string | undefined };
  const authorize = (request: FastifyRequest, route: Route, auth: AuthContext | null, key: string | null, reply: FastifyReply): void | Promise<void> => {
    if (!auth) {
      // Failed attempts count against the caller (a salted hash of the address), which slows key guessing.
      return then(consume(store, reply, [clientBucket(request)]), () => {
        if (request.is404) return; // unknown route: the not-found handler answers
        throw ERRORS.unauthenticated(key ? (key.startsWith(ACCESS_TOKEN_PREFIX) ? 'The access token is invalid, expired or revoked.' : 'The API key is invalid or has been revoked.') : undefined);
      });
    }
    request.auth = auth;
    const { config } = route;
    const counted = config.unlimited ? undefined : consume(store, reply, [
      { key: `ws:${auth.workspaceId}`, limit: limits.workspacePerMinute },
      { key: `ws:${auth.workspaceId}:${request.is404 ? 'unknown-route' : `${request.method} ${route.url}`}`, limit: limits.endpointPerMinute },
    ]);
    return then(counted, () => {
      if (request.is404) return;
      if (config.person && auth.method !== 'session') {
        throw ERRORS.forbidden('Only a person signed in to the application can do this; API keys and OAuth tokens cannot.');
      }
      if (config.role && !(auth.person?.role && roleAtLeast(auth.person.role, config.role))) {
        throw ERRORS.forbidden(`This needs the ${config.role} role or above in this workspace; yours is ${auth.person?.role ?? 'none'}.`);
      }
      const required = config.scope === undefined ? [] : Array.isArray(config.scope) ? config.scope : [config.scope];
      for (const scope of required) {
        if (!hasScope(auth.scopes, scope)) throw ERRORS.missingScope(scope, auth.scopes);
      }
      if (config.feature && !planAllows(auth.plan, config.feature)) {
        throw ERRORS.planRestricted(FEATURES[config.feature].description, minimumPlanFor(config.feature), auth.plan);
      }
    });
  };

  const authorizeSession = (request: FastifyRequest, route: Route, resolved: ResolvedSession | null, reply: FastifyReply): void | Promise<void> => {
    if (!resolved) {
      return then(consume(store, reply, [clientBucket(request)]), () => {
        if (request.is404) return;
        throw ERRORS.unauthenticated('Your session has ended: sign in again.');
      });
    }
    if (!SAFE_METHODS.has(request.method)) {
      assertSameOrigin(request, publicOrigin);
      assertCsrfToken(request, resolved.person.csrfToken);
    }
    request.person = resolved.person;
    if (route.config.person === 'account') {
      // The person's own account needs no workspace: counted per person.
      return consume(store, reply, [{ key: `user:${resolved.person.userId}`, limit: limits.workspacePerMinute }]);
    }
    if (!resolved.auth) {
      return then(consume(store, reply, [{ key: `user:${resolved.person.userId}`, limit: limits.workspacePerMinute }]), () => {
        if (request.is404) return;
        throw ERRORS.forbidden('You are not a member of a workspace now: choose one, or ask to be invited.');
      });
    }
    return authorize(request, route, resolved.auth, null, reply);
  };

  const guard = (request: FastifyRequest, reply: FastifyReply): void | Promise<void> => {
    // `request.routeOptions` is a getter that builds a new object on every read: read it once.
    const options = request.routeOptions;
    const route: Route = { config: options.config ?? {}, url: options.url };
    const { config } = route;
    if (config.public) {
      if (!config.unlimited) return consume(store, reply, [clientBucket(request)]);
      return;
    }
    const key = presentedKey(request);
    if (!key) {
      // No key: the application's session cookie, if any.
      const token = request.cookies?.[SESSION_COOKIE];
      if (token) return accounts.authenticate(token).then((resolved) => authorizeSession(request, route, resolved, reply));
      // The application asks who is signed in on every signed-out page load: without any credential
      // nothing is being guessed, so it is not counted against the client's unauthenticated limit.
      if (config.person && !request.is404) throw ERRORS.unauthenticated('Sign in to the application first.');
      return authorize(request, route, null, key, reply);
    }
    // An OAuth access token: read with its app and the person's membership on every request (nothing cached).
    if (key.startsWith(ACCESS_TOKEN_PREFIX)) return oauth.authenticate(key).then((auth) => authorize(request, route, auth, key, reply));
    // A cached key (the usual case) is answered without a promise.
    const cached = workspaces.authenticateCached(key);
    if (cached !== undefined) return authorize(request, route, cached, key, reply);
    return workspaces.authenticate(key).then((auth) => authorize(request, route, auth, key, reply));
  };

  // A callback hook, not an async one: the hot path (cached key, in-memory counters) stays synchronous.
  app.addHook('onRequest', (request, reply, done) => {
    let result: void | Promise<void>;
    try {
      result = guard(request, reply);
    } catch (error) {
      done(error as Error);
      return;
    }
    if (result instanceof Promise) result.then(() => done(), done);
    else done();
  });
}
