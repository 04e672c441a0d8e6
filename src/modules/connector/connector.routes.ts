/**
 * Connector operations (spec part 4): the Shopify app's compliance webhooks
 * and the one-time workspace name. JSON bodies here are kept raw as well,
 * because the HMAC is computed over the exact bytes sent.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ERRORS } from '../../platform/errors.ts';
import { authOf } from '../../platform/http/route-config.ts';
import { MAX_JSON_DEPTH, jsonNestsDeeperThan, tooDeep } from '../../platform/http/input-guard.ts';
import { WEBHOOK_TOPICS, type ConnectorService, type WebhookInput } from './connector.service.ts';

declare module 'fastify' {
  interface FastifyRequest {
    rawBody?: Buffer;
  }
}

const TAGS = ['Connector'];
const IDENTIFICATION =
  'Restricted to the configured connector: the API key must be one the operator made the connector\'s (`flipbook connector grant <keyId>`), else 403; ' +
  'and the request must carry `X-Shopify-Hmac-Sha256`, the base64 HMAC-SHA256 of the raw body with the Shopify app\'s client secret (SHOPIFY_CLIENT_SECRET), compared in constant time, else 401. ' +
  'Without SHOPIFY_CLIENT_SECRET the operation answers 403.';

const WebhookBody = Type.Object({
  topic: Type.Union(WEBHOOK_TOPICS.map((t) => Type.Literal(t))),
  shopDomain: Type.String({ minLength: 1, maxLength: 255 }),
  payload: Type.Object({
    shop_domain: Type.String({ minLength: 1, maxLength: 255 }),
    shop_id: Type.Integer(),
    customer: Type.Optional(Type.Object({
      email: Type.Optional(Type.String({ maxLength: 255, format: 'email' })),
      id: Type.Optional(Type.Integer()),
      phone: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
    })),
    data_request: Type.Optional(Type.Object({ id: Type.Optional(Type.Integer()) })),
    orders_to_redact: Type.Optional(Type.Array(Type.Integer(), { maxItems: 10_000 })),
    orders_requested: Type.Optional(Type.Array(Type.Integer(), { maxItems: 10_000 })),
  }),
});

const WebhookResult = Type.Object({
  action: Type.String({ description: '`customer_data_redacted`, `customer_data_recorded` or `shop_data_deletion_scheduled`.' }),
  counts: Type.Record(Type.String(), Type.Integer(), {
    description: 'Rows touched (redact), found (data request) or to be deleted (shop/redact), per kind: `leads`, `access_list_entries`, `viewers`, `audit_events`, `magic_links`, `mail_messages`; `catalogs`, `catalog_items`.',
  }),
  replayed: Type.Boolean({ description: 'True for a repeated delivery: the first result, nothing done again.' }),
  status: Type.String({ description: '`completed` (redact), `recorded` (data request), `scheduled` (shop/redact).' }),
});

const RenameBody = Type.Object({
  workspace_name: Type.String({ minLength: 1, maxLength: 255 }),
  workspace_slug: Type.Optional(Type.String({ minLength: 1, maxLength: 60, pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', description: 'Lower-case letters, digits and single dashes; unique across workspaces. Default: made from the name.' })),
}, { additionalProperties: false });

const WorkspaceRecord = Type.Object({ can_rename: Type.Boolean(), id: Type.Integer(), name: Type.String(), slug: Type.String() });

export const connectorRoutes: FastifyPluginAsyncTypebox<{ connector: ConnectorService }> = async (app, { connector }) => {
  // This plugin's JSON parser keeps the bytes: the HMAC is over them, not over a re-serialisation.
  // It replaces the service's parser here, so it applies the same depth bound.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const raw = body as Buffer;
    request.rawBody = raw;
    if (jsonNestsDeeperThan(raw.toString('utf8'), MAX_JSON_DEPTH)) return done(tooDeep(), undefined);
    try {
      done(null, raw.length === 0 ? undefined : JSON.parse(raw.toString('utf8')));
    } catch {
      done(ERRORS.badRequest('The body is not valid JSON.'), undefined);
    }
  });
  // Identification before validation: an unsigned or foreign call learns nothing about the body's shape.
  app.addHook('preValidation', async (request) => {
    const body = request.body as { shopDomain?: unknown } | undefined;
    const shop = typeof body?.shopDomain === 'string' ? body.shopDomain : undefined;
    const signature = request.headers['x-shopify-hmac-sha256'];
    await connector.authorise(authOf(request), request.rawBody ?? Buffer.alloc(0), typeof signature === 'string' ? signature : undefined, shop);
  });

  app.post('/integrations/shopify/webhooks', {
    schema: {
      operationId: 'shopifyComplianceWebhook', tags: TAGS, summary: 'Shopify compliance webhooks',
      description:
        'The three mandatory privacy topics, forwarded by the Shopify app for the shop\'s workspace. ' + IDENTIFICATION + ' ' +
        'Deliveries are deduplicated on `X-Shopify-Webhook-Id` (or a SHA-256 of topic and payload when absent): a repeat answers the first result with `replayed: true` and does nothing again. ' +
        '`customers/redact` removes or anonymises the customer\'s data in this workspace, found by `payload.customer.email`: lead submissions deleted; access-list entries deleted ' +
        '(a book\'s last entry is replaced by an address nobody can sign in with, so the book stays private); the reader\'s identity in analytics deleted (their views and events stay, anonymous) ' +
        'and the address blanked in audit events; sign-in links and mails to the address deleted. `counts` gives the rows touched per kind. ' +
        '`customers/data_request` assembles what the workspace holds about the customer and records it in the connector\'s log (`flipbook connector events --workspace <id>`). ' +
        '`shop/redact` schedules the deletion of the shop\'s data, the workspace\'s `shopify` catalogs with their items and sync jobs (a background job); `counts` says what will go. ' +
        'Every action is recorded in the connector\'s audit log. A `shopDomain` other than `payload.shop_domain` is a 422; a key granted for another shop a 403.',
      body: WebhookBody,
      headers: Type.Object({
        'x-shopify-hmac-sha256': Type.Optional(Type.String({ description: 'base64 HMAC-SHA256 of the raw body with the app\'s client secret.' })),
        'x-shopify-webhook-id': Type.Optional(Type.String({ maxLength: 255, description: 'The delivery id; repeats are answered from the first result.' })),
      }),
      response: {
        202: Type.Object({ data: WebhookResult }, {
          examples: [{ data: { action: 'customer_data_redacted', counts: { leads: 2, access_list_entries: 1, viewers: 1, audit_events: 5, magic_links: 1, mail_messages: 1 }, replayed: false, status: 'completed' } }],
        }),
      },
    },
    config: { scope: 'catalogs:write' },
  }, async (request, reply) => {
    const webhookId = request.headers['x-shopify-webhook-id'];
    const result = await connector.handleWebhook(authOf(request), request.body as WebhookInput, typeof webhookId === 'string' ? webhookId : undefined);
    reply.code(202);
    return { data: result };
  });

  app.post('/integrations/shopify/workspace-name', {
    schema: {
      operationId: 'shopifyWorkspaceName', tags: TAGS, summary: 'Name the workspace (once)',
      description:
        'Replaces the name (and slug) generated at signup with the shop\'s, once: `can_rename` becomes false and a second call is a 422 on `workspace_name`. ' +
        '`workspace_slug` must not be any other workspace\'s (a unique index; a collision is a 422 on `workspace_slug`). ' + IDENTIFICATION,
      body: RenameBody,
      response: {
        200: Type.Object({
          data: Type.Object({ workspace: WorkspaceRecord }),
          meta: Type.Object({ previous_name: Type.String(), previous_slug: Type.String() }),
        }, { examples: [{ data: { workspace: { can_rename: false, id: 3, name: 'Acme Outdoor', slug: 'acme-outdoor' } }, meta: { previous_name: 'Workspace 8f2k', previous_slug: 'workspace-8f2k' } }] }),
      },
    },
    config: { scope: 'workspace:write' },
  }, async (request) => connector.renameWorkspace(authOf(request), request.body));
};
