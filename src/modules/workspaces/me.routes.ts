import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { FEATURES, featuresOf } from '../../platform/auth/plans.ts';
import { SCOPES } from '../../platform/auth/scopes.ts';
import { authOf } from '../../platform/http/route-config.ts';
import type { RateLimits } from '../../platform/http/guard.ts';

const Me = Type.Object({
  workspace: Type.Object({ id: Type.Integer(), name: Type.String(), slug: Type.String(), can_rename: Type.Boolean() }),
  plan: Type.Object({
    name: Type.String({ description: '`free`, `pro` or `company`.' }),
    features: Type.Record(Type.String(), Type.Boolean(), { description: `What the plan allows: ${Object.entries(FEATURES).map(([k, f]) => `\`${k}\` (${f.description}; ${f.plans.join(', ')})`).join('; ')}.` }),
  }),
  auth: Type.Object({
    method: Type.String({ description: '`api_key`, `session` for a person signed in to the application, or `oauth` for an OAuth access token.' }),
    key_id: Type.Union([Type.Integer(), Type.Null()], { description: 'The key (method `api_key`), else null.' }),
    key_prefix: Type.Union([Type.String(), Type.Null()], { description: 'The start of the key, for telling keys apart; never the key. Null without a key.' }),
    mode: Type.Union([Type.String(), Type.Null()], { description: '`live` or `test`; null without a key.' }),
    user: Type.Union([Type.Object({ id: Type.Integer(), email: Type.String(), role: Type.String({ description: '`owner`, `admin`, `editor` or `viewer`.' }) }), Type.Null()], { description: 'The signed-in person (method `session`) or the person an OAuth token acts for (method `oauth`), else null.' }),
    app: Type.Optional(Type.Union([Type.Object({ id: Type.Integer(), name: Type.String(), client_id: Type.String() }), Type.Null()], { description: 'The OAuth app (method `oauth`), else null.' })),
    scopes: Type.Array(Type.String(), { description: `Granted scopes; \`*\` grants all of: ${SCOPES.join(', ')}.` }),
  }),
  rate_limits: Type.Object({
    workspace_per_minute: Type.Integer(),
    endpoint_per_minute: Type.Integer(),
  }),
});

const example = {
  workspace: { id: 1, name: 'Acme Publishing', slug: 'acme-publishing', can_rename: true },
  plan: { name: 'company', features: featuresOf('company') },
  auth: { method: 'api_key', key_id: 3, key_prefix: 'wsk_live_4fQ9xa…', mode: 'live', user: null, scopes: ['*'] },
  rate_limits: { workspace_per_minute: 1000, endpoint_per_minute: 100 },
};

export const meRoutes: FastifyPluginAsyncTypebox<{ limits: RateLimits }> = async (app, { limits }) => {
  app.get('/me', {
    schema: {
      operationId: 'getMe',
      tags: ['General'],
      summary: 'The calling workspace, its plan and the key',
      description: 'Describes the workspace the key belongs to, what its plan allows, and the key\'s mode and scopes.',
      response: { 200: Type.Object({ data: Me }, { examples: [{ data: example }] }) },
    },
    config: {},
  }, async (request) => {
    const auth = authOf(request);
    return {
      data: {
        workspace: { id: auth.workspaceId, name: auth.workspace.name, slug: auth.workspace.slug, can_rename: auth.workspace.canRename },
        plan: { name: auth.plan, features: featuresOf(auth.plan) },
        auth: {
          method: auth.method, key_id: auth.keyId, key_prefix: auth.keyPrefix, mode: auth.mode, scopes: [...auth.scopes],
          user: auth.person?.role ? { id: auth.person.userId, email: auth.person.email, role: auth.person.role }
            : auth.oauth ? { id: auth.oauth.userId, email: auth.oauth.email, role: auth.oauth.role } : null,
          app: auth.oauth ? { id: auth.oauth.appId, name: auth.oauth.appName, client_id: auth.oauth.clientId } : null,
        },
        rate_limits: { workspace_per_minute: limits.workspacePerMinute, endpoint_per_minute: limits.endpointPerMinute },
      },
    };
  });
};
