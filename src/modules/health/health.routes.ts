import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { API_VERSION } from '../../platform/http/openapi.ts';

const Health = Type.Object(
  {
    status: Type.String({ description: '`ok`, or `unavailable` when the database cannot be reached.' }),
    timestamp: Type.String({ format: 'date-time' }),
    version: Type.String(),
  },
  { examples: [{ status: 'ok', timestamp: '2026-11-22T10:00:00.000Z', version: API_VERSION }] },
);

/** Liveness and readiness in one: 200 when the database answers, 503 when it does not. No key needed. */
export const healthRoutes: FastifyPluginAsyncTypebox<{ ping: () => Promise<void> }> = async (app, { ping }) => {
  app.get('/health', {
    schema: {
      operationId: 'getHealth',
      tags: ['General'],
      summary: 'Service health',
      description: 'No key needed and not rate limited, so load balancers can poll it.',
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
};
