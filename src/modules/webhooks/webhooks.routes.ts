/** Webhook subscriptions, their delivery log, and the sample dispatch (spec part 4, "Webhooks"). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { authOf } from '../../platform/http/route-config.ts';
import { CursorMeta } from '../../platform/http/schemas.ts';
import { WEBHOOK_EVENT_TYPES } from './event-types.ts';
import type { WebhooksService } from './webhooks.service.ts';
import {
  CreateSubscriptionBody, DeliveryAttempt, DeliveryParams, Envelope, ListDeliveriesQuery, ListSubscriptionsQuery, SampleDispatchBody, SampleEventsQuery,
  SubscriptionParams, UpdateSubscriptionBody, WebhookDelivery, WebhookSubscription, exampleSubscription,
} from './webhooks.schemas.ts';

const SubscriptionRef = Type.Ref('WebhookSubscription');
const DeliveryRef = Type.Ref('WebhookDelivery');
const tags = ['Webhooks'];
const WithSecret = Type.Object({
  data: Type.Intersect([SubscriptionRef, Type.Object({ signing_secret: Type.String({ description: 'whsec_…: shown this once; store it to verify signatures.' }) })]),
});

export const webhooksRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhooksService }> = async (app, { webhooks }) => {
  app.addSchema(WebhookSubscription);
  app.addSchema(WebhookDelivery);

  app.get('/webhook-subscriptions', {
    schema: {
      operationId: 'listWebhookSubscriptions', tags, summary: 'List webhook subscriptions',
      description: 'Newest first, cursor-paginated (limit 1-100, default 25). Deleted subscriptions are not listed; their deliveries stay reachable through their id.',
      querystring: ListSubscriptionsQuery,
      response: { 200: Type.Object({ data: Type.Array(SubscriptionRef), meta: CursorMeta }, { examples: [{ data: [exampleSubscription], meta: { next_cursor: null, has_more: false } }] }) },
    },
    config: { scope: 'webhooks:read' },
  }, async (request) => webhooks.list(authOf(request), { cursor: request.query.cursor, limit: request.query.limit ?? 25 }));

  app.post('/webhook-subscriptions', {
    schema: {
      operationId: 'createWebhookSubscription', tags, summary: 'Subscribe an endpoint to events',
      description:
        'Answers 201 with the subscription and its `signing_secret` (`whsec_…`), shown this once. `target_url` is checked now (https, no credentials, ' +
        'a public address: a private, loopback or link-local one is a 422) and again at every connection. `filters` take handles: a book by its random_id, ' +
        'a tracked link by its id or by its slug with `book_id`. At most 100 subscriptions per workspace (409).',
      body: CreateSubscriptionBody,
      response: { 201: WithSecret },
    },
    config: { scope: 'webhooks:write' },
  }, async (request, reply) => {
    const { record, secret } = await webhooks.create(authOf(request), request.body);
    reply.code(201);
    return { data: { ...record, signing_secret: secret } };
  });

  app.get('/webhook-subscriptions/options', {
    schema: {
      operationId: 'getWebhookSubscriptionOptions', tags, summary: 'What a subscription can select',
      description: 'The workspace\'s books (value: random_id) and tracked links (value: slug, with `id` and `book_id`), every event type, and the body formats (providers).',
      response: {
        200: Type.Object({
          data: Type.Object({
            books: Type.Array(Type.Object({ label: Type.String(), value: Type.String() })),
            event_types: Type.Array(Type.Object({ label: Type.String(), value: Type.String() })),
            providers: Type.Array(Type.Object({ label: Type.String(), value: Type.String() })),
            tracked_links: Type.Array(Type.Object({ label: Type.String(), value: Type.String(), id: Type.Integer(), book_id: Type.String() })),
          }),
          meta: Type.Object({}),
        }),
      },
    },
    config: { scope: 'webhooks:read' },
  }, async (request) => ({ data: await webhooks.options(authOf(request)), meta: {} }));

  app.get('/webhook-subscriptions/sample-events', {
    schema: {
      operationId: 'listWebhookSampleEvents', tags, summary: 'Recent payloads, for mapping fields',
      description: `Up to three recent real events of each type asked (the \`{ type, timestamp, data }\` envelope a standard subscription receives), newest first; a type the workspace has no event of yet answers its documented example, and is named in \`meta.examples\`. Types: ${WEBHOOK_EVENT_TYPES.join(', ')}.`,
      querystring: SampleEventsQuery,
      response: { 200: Type.Object({ data: Type.Array(Envelope), meta: Type.Object({ examples: Type.Array(Type.String()) }) }) },
    },
    config: { scope: 'webhooks:read' },
  }, async (request) => webhooks.sampleEvents(authOf(request), (request.query.event_types ?? '').split(',').map((s) => s.trim()).filter(Boolean)));

  app.get('/webhook-subscriptions/:subscription', {
    schema: {
      operationId: 'getWebhookSubscription', tags, summary: 'A webhook subscription',
      params: SubscriptionParams, response: { 200: Type.Object({ data: SubscriptionRef }) },
    },
    config: { scope: 'webhooks:read' },
  }, async (request) => ({ data: await webhooks.get(authOf(request), request.params.subscription) }));

  app.put('/webhook-subscriptions/:subscription', {
    schema: {
      operationId: 'updateWebhookSubscription', tags, summary: 'Change a webhook subscription',
      description: 'Fields left out keep their values. `is_active: false` pauses it (events meanwhile are not delivered; pending retries wait); `is_active: true` re-enables it and clears a deactivation.',
      params: SubscriptionParams, body: UpdateSubscriptionBody, response: { 200: Type.Object({ data: SubscriptionRef }) },
    },
    config: { scope: 'webhooks:write' },
  }, async (request) => ({ data: await webhooks.update(authOf(request), request.params.subscription, request.body) }));

  app.delete('/webhook-subscriptions/:subscription', {
    schema: {
      operationId: 'deleteWebhookSubscription', tags, summary: 'Delete a webhook subscription',
      description: 'Answers 200 with the subscription and `deleted: true`. Pending deliveries are given up; the delivery history stays listable at GET /webhook-subscriptions/{subscription}/deliveries.',
      params: SubscriptionParams, response: { 200: Type.Object({ data: Type.Intersect([SubscriptionRef, Type.Object({ deleted: Type.Literal(true) })]) }) },
    },
    config: { scope: 'webhooks:write' },
  }, async (request) => ({ data: { ...(await webhooks.delete(authOf(request), request.params.subscription)), deleted: true as const } }));

  app.post('/webhook-subscriptions/:subscription/enable', {
    schema: {
      operationId: 'enableWebhookSubscription', tags, summary: 'Re-enable a deactivated subscription',
      description: 'Clears the deactivation (410 Gone, five days of failures) and delivers new events again. Deliveries given up stay failed; redeliver them one by one.',
      params: SubscriptionParams, response: { 200: Type.Object({ data: SubscriptionRef }) },
    },
    config: { scope: 'webhooks:write' },
  }, async (request) => ({ data: await webhooks.enable(authOf(request), request.params.subscription) }));

  app.post('/webhook-subscriptions/:subscription/rotate-secret', {
    schema: {
      operationId: 'rotateWebhookSigningSecret', tags, summary: 'Rotate the signing secret',
      description: 'Answers the subscription with its new `signing_secret`, shown this once. For 24 hours deliveries carry two signatures (new and old secret), so receivers can switch without losing any.',
      params: SubscriptionParams, response: { 200: WithSecret },
    },
    config: { scope: 'webhooks:write' },
  }, async (request) => {
    const { record, secret } = await webhooks.rotateSecret(authOf(request), request.params.subscription);
    return { data: { ...record, signing_secret: secret } };
  });

  app.get('/webhook-subscriptions/:subscription/deliveries', {
    schema: {
      operationId: 'listWebhookDeliveries', tags, summary: 'Delivery log of a subscription',
      description: 'Newest first, cursor-paginated (limit 1-200, default 25), filterable by `status` and `event_type`; also for a deleted subscription (`meta.subscription_deleted`). Kept WEBHOOK_DELIVERY_RETENTION_DAYS (30) days.',
      params: SubscriptionParams, querystring: ListDeliveriesQuery,
      response: { 200: Type.Object({ data: Type.Array(DeliveryRef), meta: Type.Object({ next_cursor: Type.Union([Type.String(), Type.Null()]), has_more: Type.Boolean(), subscription_deleted: Type.Boolean() }) }) },
    },
    config: { scope: 'webhooks:read' },
  }, async (request) => webhooks.deliveries(authOf(request), request.params.subscription, { ...request.query, limit: request.query.limit ?? 25 }));

  app.get('/webhook-subscriptions/:subscription/deliveries/:delivery', {
    schema: {
      operationId: 'getWebhookDelivery', tags, summary: 'A delivery with every attempt',
      params: DeliveryParams,
      response: { 200: Type.Object({ data: Type.Intersect([DeliveryRef, Type.Object({ attempt_log: Type.Array(DeliveryAttempt) })]) }) },
    },
    config: { scope: 'webhooks:read' },
  }, async (request) => ({ data: await webhooks.delivery(authOf(request), request.params.subscription, request.params.delivery) }));

  app.post('/webhook-subscriptions/:subscription/deliveries/:delivery/redeliver', {
    schema: {
      operationId: 'redeliverWebhookDelivery', tags, summary: 'Send a past delivery again',
      description: 'The same body and webhook-id (receivers deduplicate on it), signed anew, with a fresh retry schedule. Answers 202 with the delivery; 409 while it is pending or the subscription is inactive.',
      params: DeliveryParams, response: { 202: Type.Object({ data: DeliveryRef }) },
    },
    config: { scope: 'webhooks:write' },
  }, async (request, reply) => {
    const record = await webhooks.redeliver(authOf(request), request.params.subscription, request.params.delivery);
    reply.code(202);
    return { data: record };
  });

  app.post('/webhook-subscriptions/:subscription/test', {
    schema: {
      operationId: 'testWebhookSubscription', tags, summary: 'Send a test event',
      description: 'Queues the documented example of `event_type` (default: the subscription\'s first event type), signed like any delivery, with a webhook-id starting `evt_test_`. Answers 202 with the delivery; follow it in the delivery log.',
      params: SubscriptionParams, querystring: Type.Object({ event_type: Type.Optional(Type.Union(WEBHOOK_EVENT_TYPES.map((t) => Type.Literal(t)))) }),
      response: { 202: Type.Object({ data: DeliveryRef }) },
    },
    config: { scope: 'webhooks:write' },
  }, async (request, reply) => {
    const record = await webhooks.test(authOf(request), request.params.subscription, request.query.event_type);
    reply.code(202);
    return { data: record };
  });

  app.post('/webhooks', {
    schema: {
      operationId: 'dispatchSampleWebhook', tags, summary: 'Send a sample event to a URL',
      description:
        'Sends one sample event now, without a subscription, and answers 202 when the URL answered 2xx, or 502 (`BadGatewayException`, details `response_status`, `reason`) otherwise. ' +
        'The body is the `{ type, timestamp, data }` envelope with `webhook-id` and `webhook-timestamp` headers; it is not signed (there is no secret). The URL is checked like a subscription\'s (422 on `url`).',
      body: SampleDispatchBody,
      response: {
        202: Type.Object({ data: Type.Object({ event: Type.String(), message: Type.String(), payload: Envelope, target_url: Type.String() }), meta: Type.Object({ response_status: Type.Integer() }) }),
        502: { description: 'The URL did not answer 2xx (BadGatewayException).', $ref: 'ErrorEnvelope#' },
      },
    },
    config: { scope: 'webhooks:write' },
  }, async (request, reply) => {
    const result = await webhooks.dispatchSample(request.body);
    reply.code(202);
    return result;
  });
};
