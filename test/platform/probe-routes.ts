/**
 * Routes that exercise the platform's mechanisms (guard, idempotency,
 * validation, pagination) over real tables, registered through the same
 * app builder as the product routes.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { and, eq } from 'drizzle-orm';
import { Type } from 'typebox';
import { apiKeys } from '../../src/modules/workspaces/workspaces.tables.ts';
import type { Db } from '../../src/platform/db/database.ts';
import { ERRORS } from '../../src/platform/errors.ts';
import { afterCursor, decodeCursor, orderOf, toPage, type KeysetSort } from '../../src/platform/http/pagination.ts';
import { authOf } from '../../src/platform/http/route-config.ts';
import { cursorQuery } from '../../src/platform/http/schemas.ts';

export function probeRoutes(getDb: () => Db) {
  let executions = 0;
  const plugin: FastifyPluginAsyncTypebox = async (app) => {
    app.post('/probe/writes', {
      schema: {
        body: Type.Object({
          name: Type.String({ minLength: 1, maxLength: 10 }),
          count: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 })),
          status: Type.Optional(Type.Union([Type.Literal('draft'), Type.Literal('publish')])),
          fail: Type.Optional(Type.Boolean()),
          delay_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 2000 })),
        }),
      },
      config: { scope: 'books:write' },
    }, async (request, reply) => {
      executions += 1;
      const execution = executions;
      if (request.body.delay_ms) await new Promise((r) => setTimeout(r, request.body.delay_ms));
      if (request.body.fail) throw ERRORS.conflict('Asked to fail.');
      reply.code(201).header('location', `/v1/probe/writes/${execution}`);
      return { data: { name: request.body.name, execution } };
    });

    app.get('/probe/company', { config: { scope: 'analytics:read', feature: 'analytics' } }, async () => ({ data: { ok: true } }));

    const sort: KeysetSort = {
      name: '-created_at',
      key: apiKeys.createdAt,
      cast: 'timestamptz',
      direction: 'desc',
      id: apiKeys.id,
      valueOf: (row) => (row.createdAt as Date).toISOString(),
    };
    app.get('/probe/keys', {
      schema: { querystring: Type.Object(cursorQuery(200, 2)) },
      config: { scope: 'books:read' },
    }, async (request) => {
      const { workspaceId } = authOf(request);
      const limit = request.query.limit ?? 2;
      const cursor = decodeCursor(sort, request.query.cursor);
      const rows = await getDb()
        .select({ id: apiKeys.id, name: apiKeys.name, createdAt: apiKeys.createdAt })
        .from(apiKeys)
        .where(and(eq(apiKeys.workspaceId, workspaceId), afterCursor(sort, cursor)))
        .orderBy(...orderOf(sort))
        .limit(limit + 1);
      const page = toPage(sort, rows, limit, (r) => r.id);
      return { data: page.rows.map((r) => ({ id: r.id, name: r.name })), meta: page.meta };
    });
  };
  return plugin;
}
