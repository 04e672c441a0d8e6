import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { API_VERSION } from '../../platform/http/openapi.ts';
import type { Readiness } from './readiness.ts';

const Health = Type.Object(
  {
    status: Type.String({ description: '`ok`, or `unavailable` when the database cannot be reached.' }),
    timestamp: Type.String({ format: 'date-time' }),
    version: Type.String(),
  },
  { examples: [{ status: 'ok', timestamp: '2026-11-22T10:00:00.000Z', version: API_VERSION }] },
);

const CheckResult = Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]);

const Ready = Type.Object(
  {
    status: Type.Union([Type.Literal('ready'), Type.Literal('unavailable')], { description: '`ready` when every check is `ok`.' }),
    timestamp: Type.String({ format: 'date-time' }),
    version: Type.String(),
    checks: Type.Object({
      database: CheckResult,
      migrations: Type.Union([Type.Literal('ok'), Type.Literal('migrating')], { description: '`migrating` while a process applies migrations or this code has migrations the database lacks.' }),
      storage: CheckResult,
      redis: Type.Optional(Type.Union([Type.Literal('ok'), Type.Literal('unavailable')], { description: 'Only when the rate limits are counted in Redis (REDIS_URL set).' })),
    }),
  },
  { examples: [{ status: 'ready', timestamp: '2026-11-22T10:00:00.000Z', version: API_VERSION, checks: { database: 'ok', migrations: 'ok', storage: 'ok' } }] },
);

/** Liveness (`/health`: the process answers and reaches its database) and readiness (`/health/ready`: everything a request needs). No key needed. */
export const healthRoutes: FastifyPluginAsyncTypebox<{ ping: () => Promise<void>; readiness: Readiness }> = async (app, { ping, readiness }) => {
  app.get('/health', {
    schema: {
      operationId: 'getHealth',
      tags: ['General'],
      summary: 'Service health',
      description: 'Liveness. No key needed and not rate limited, so load balancers can poll it.',
      response: { 200: Health, 503: Health },
    },
    config: { public: true, unlimited: true },
  }, async (_request, reply) => {
    const timestamp = new Date().toISOString();
    try {
      await ping();
      return { status: 'ok', timestamp, version: API_VERSION };
    } catch {
      return reply.code(503).send({ status: 'unavailable', timestamp, version: API_VERSION });
    }
  });

  app.get('/health/ready', {
    schema: {
      operationId: 'getReadiness',
      tags: ['General'],
      summary: 'Service readiness',
      description: 'Readiness, for a load balancer: 200 when the database, the file storage and Redis (when configured) answer and no migration is running or missing; '
        + '503 otherwise, with the check that failed. Each check gives up after 2 seconds. No key needed and not rate limited. Liveness stays `GET /v1/health`.',
      response: { 200: Ready, 503: Ready },
    },
    config: { public: true, unlimited: true },
  }, async (_request, reply) => {
    const checks = await readiness.check();
    const ready = Object.values(checks).every((c) => c === 'ok');
    return reply.code(ready ? 200 : 503).header('cache-control', 'no-store')
      .send({ status: ready ? 'ready' : 'unavailable', timestamp: new Date().toISOString(), version: API_VERSION, checks });
  });
};
