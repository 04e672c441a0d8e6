/** API keys made in the application, and the workspace's audit trail (admins and owners). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { SCOPES } from '../../platform/auth/scopes.ts';
import { ERRORS } from '../../platform/errors.ts';
import { errorResponses } from '../../platform/http/openapi.ts';
import { authOf } from '../../platform/http/route-config.ts';
import { CursorMeta, Data, DateTime, Nullable } from '../../platform/http/schemas.ts';
import type { Actor, AuditTrailService } from './audit-trail.service.ts';
import type { WorkspacesService } from './workspaces.service.ts';

const ADMIN = { person: 'workspace', role: 'admin' } as const;

const ApiKey = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  prefix: Type.String({ description: 'The start of the key, for telling keys apart; never the key.' }),
  scopes: Type.Array(Type.String()),
  mode: Type.String({ description: '`live` or `test`.' }),
  created_by: Nullable(Type.Object({ id: Type.Integer(), email: Type.String() }, { description: 'The person who made it; null when made by the operator\'s CLI.' })),
  created_at: DateTime,
  last_used_at: Nullable(DateTime),
  expires_at: Nullable(DateTime),
  revoked_at: Nullable(DateTime),
  rotated_from_id: Nullable(Type.Integer()),
}, { $id: 'ApiKey', title: 'API key' });

const CreatedApiKey = Type.Object({
  ...ApiKey.properties,
  key: Type.String({ description: 'The key itself: shown in this answer only; only its hash is stored.' }),
}, { $id: 'CreatedApiKey', title: 'Created API key' });

const AuditEvent = Type.Object({
  id: Type.Integer(),
  actor: Type.Object({ type: Type.String({ description: '`user`, `api_key` or `operator`.' }), id: Nullable(Type.Integer()), label: Type.String() }),
  action: Type.String({ description: 'api_key.created, api_key.rotated, api_key.revoked, member.added, member.role_changed, member.removed, member.left, invitation.sent, invitation.resent, invitation.revoked, invitation.accepted.' }),
  target_type: Type.String(),
  target_id: Type.String(),
  metadata: Type.Object({}, { additionalProperties: true }),
  created_at: DateTime,
}, { $id: 'AuditEvent', title: 'Audit event' });

function actorOf(request: FastifyRequest): { actor: Actor; workspaceId: number; role: NonNullable<NonNullable<ReturnType<typeof authOf>['person']>['role']> } {
  const auth = authOf(request);
  if (!auth.person?.role) throw ERRORS.forbidden('Only a person signed in to the application can do this.');
  return { actor: { type: 'user', userId: auth.person.userId, label: auth.person.email }, workspaceId: auth.workspaceId, role: auth.person.role };
}

export const apiKeysRoutes: FastifyPluginAsyncTypebox<{ workspaces: WorkspacesService; auditTrail: AuditTrailService }> = async (app, { workspaces, auditTrail }) => {
  app.addSchema(ApiKey);
  app.addSchema(CreatedApiKey);
  app.addSchema(AuditEvent);
  const KeyId = Type.Object({ keyId: Type.Integer({ minimum: 1 }) });

  app.get('/api-keys', {
    schema: {
      operationId: 'listApiKeys', tags: ['API keys'], summary: 'The workspace\'s API keys',
      description: 'Active keys (neither revoked nor expired), newest last. Never the keys themselves.',
      response: { 200: Data(Type.Array(Type.Ref('ApiKey'))) },
    },
    config: ADMIN,
  }, async (request) => ({ data: await workspaces.listKeys(authOf(request).workspaceId, { activeOnly: true }) }));

  app.post('/api-keys', {
    schema: {
      operationId: 'createApiKey', tags: ['API keys'], summary: 'Create an API key',
      description: 'The plain key is in this answer only. Its scopes may not exceed your role\'s (only owners grant `*` and `workspace:write`).',
      body: Type.Object({
        name: Type.String({ minLength: 1, maxLength: 100 }),
        scopes: Type.Array(Type.Union([Type.Literal('*'), ...SCOPES.map((s) => Type.Literal(s))]), { minItems: 1, maxItems: SCOPES.length + 1 }),
        mode: Type.Optional(Type.Union([Type.Literal('live'), Type.Literal('test')], { default: 'live' })),
        expires_at: Type.Optional(Nullable(DateTime)),
      }),
      response: { 201: Data(Type.Ref('CreatedApiKey')) },
    },
    config: ADMIN,
  }, async (request, reply) => {
    const { actor, workspaceId, role } = actorOf(request);
    const { name, scopes, mode, expires_at: expiresAt } = request.body;
    const created = await workspaces.createKey({ workspaceId, name, scopes, mode, expiresAt: expiresAt ? new Date(expiresAt) : null, actor, grantedBy: role });
    return reply.code(201).send({ data: created });
  });

  app.post('/api-keys/:keyId/rotate', {
    schema: {
      operationId: 'rotateApiKey', tags: ['API keys'], summary: 'Rotate an API key',
      description: 'A new key with the same name, scopes and mode. The old one stops at once, or after `overlap_hours` (up to 168, 7 days).',
      params: KeyId,
      body: Type.Object({ overlap_hours: Type.Optional(Type.Integer({ minimum: 0, maximum: 168, default: 0 })) }),
      response: { 201: Data(Type.Ref('CreatedApiKey')), ...errorResponses(404, 409) },
    },
    config: ADMIN,
  }, async (request, reply) => {
    const { actor, workspaceId } = actorOf(request);
    const created = await workspaces.rotateKey(request.params.keyId, { workspaceId, actor, overlapHours: request.body.overlap_hours ?? 0 });
    return reply.code(201).send({ data: created });
  });

  app.delete('/api-keys/:keyId', {
    schema: {
      operationId: 'revokeApiKey', tags: ['API keys'], summary: 'Revoke an API key',
      description: 'Requests with it answer 401 at once, in every process.',
      params: KeyId,
      response: { 200: Data(Type.Ref('ApiKey')), ...errorResponses(404) },
    },
    config: ADMIN,
  }, async (request) => {
    const { actor, workspaceId } = actorOf(request);
    return { data: await workspaces.revokeKey(request.params.keyId, { workspaceId, actor }) };
  });

  app.get('/audit-trail', {
    schema: {
      operationId: 'listAuditTrail', tags: ['API keys'], summary: 'Who did what to keys, members and invitations',
      description: 'Newest first. Follow `meta.next_cursor`.',
      querystring: Type.Object({
        cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$', description: 'Opaque cursor from `meta.next_cursor`.' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
      }),
      response: { 200: Type.Object({ data: Type.Array(Type.Ref('AuditEvent')), meta: CursorMeta }) },
    },
    config: ADMIN,
  }, async (request) => {
    const { workspaceId } = actorOf(request);
    const before = request.query.cursor ? Number(request.query.cursor) : undefined;
    const page = await auditTrail.list(workspaceId, { limit: request.query.limit ?? 50, before });
    return { data: page.events, meta: { next_cursor: page.nextBefore === null ? null : String(page.nextBefore), has_more: page.nextBefore !== null } };
  });
};
