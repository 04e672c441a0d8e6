/**
 * The request guard, in one onRequest hook: who is calling (API key), how
 * much they may call (rate limits, spec part 8), and whether the key's scopes
 * and the workspace's plan allow the operation (spec part 5).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasScope } from '../auth/scopes.ts';
import { minimumPlanFor, planAllows, FEATURES } from '../auth/plans.ts';
import { ERRORS } from '../errors.ts';
import type { WorkspacesService } from '../../modules/workspaces/workspaces.service.ts';
import type { RateLimitStore } from './rate-limit-store.ts';
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

export async function consume(store: RateLimitStore, reply: FastifyReply, buckets: Bucket[]): Promise<void> {
  const active = buckets.filter((b) => b.limit > 0);
  if (active.length === 0) return;
  const now = Date.now();
  const windowStart = Math.floor(now / WINDOW_MS) * WINDOW_MS;
  const counts = await store.hit(active.map((b) => b.key), windowStart, WINDOW_MS);
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

export function registerGuard(app: FastifyInstance, deps: { workspaces: WorkspacesService; store: RateLimitStore; limits: RateLimits }): void {
  const { workspaces, store, limits } = deps;
  app.decorateRequest('auth', null);

  app.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config ?? {};
    const unauthenticatedBucket = (): Bucket[] => [{ key: `ip:${request.ip}`, limit: limits.unauthenticatedPerMinute }];

    if (config.public) {
      if (!config.unlimited) await consume(store, reply, unauthenticatedBucket());
      return;
    }

    const key = presentedKey(request);
    const auth = key ? await workspaces.authenticate(key) : null;
    if (!auth) {
      // Failed attempts count against the caller's address, which slows key guessing.
      await consume(store, reply, unauthenticatedBucket());
      if (request.is404) return; // unknown route: the not-found handler answers
      throw ERRORS.unauthenticated(key ? 'The API key is invalid or has been revoked.' : undefined);
    }
    request.auth = auth;

    if (!config.unlimited) {
      const endpoint = request.is404 ? 'unknown-route' : `${request.method} ${request.routeOptions.url}`;
      await consume(store, reply, [
        { key: `ws:${auth.workspaceId}`, limit: limits.workspacePerMinute },
        { key: `ws:${auth.workspaceId}:${endpoint}`, limit: limits.endpointPerMinute },
      ]);
    }
    if (request.is404) return;

    const required = config.scope === undefined ? [] : Array.isArray(config.scope) ? config.scope : [config.scope];
    for (const scope of required) {
      if (!hasScope(auth.scopes, scope)) throw ERRORS.missingScope(scope, auth.scopes);
    }
    if (config.feature && !planAllows(auth.plan, config.feature)) {
      throw ERRORS.planRestricted(FEATURES[config.feature].description, minimumPlanFor(config.feature), auth.plan);
    }
  });
}
