/** Request and response shapes of the webhook operations (spec part 4, "Webhooks"; fields of part 2). */
import { Type } from 'typebox';
import { DateTime, Nullable, cursorQuery } from '../../platform/http/schemas.ts';
import { WEBHOOK_EVENT_TYPES } from './event-types.ts';
import { PROVIDER_VALUES } from './providers.ts';

const LabelValue = Type.Object({ label: Type.String(), value: Type.String() });

const EventTypeValue = Type.Union(WEBHOOK_EVENT_TYPES.map((t) => Type.Literal(t)));

const FilterInput = Type.Object({
  type: Type.Union([Type.Literal('book'), Type.Literal('tracked_link')]),
  value: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Integer({ minimum: 1 })], {
    description: "book: the book's random_id. tracked_link: its id, or its slug together with `book_id`.",
  }),
  book_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "tracked_link by slug: the book's random_id." })),
  label: Type.Optional(Nullable(Type.String({ description: 'Ignored on input (shown on output), so a filter can be re-submitted as read.' }))),
}, { additionalProperties: false });

const Filter = Type.Object({
  type: Type.Union([Type.Literal('book'), Type.Literal('tracked_link')]),
  value: Type.String({ description: "book: the book's random_id; tracked_link: its slug (its id when it was deleted)." }),
  book_id: Type.Optional(Type.String({ description: "tracked_link: the random_id of the link's book." })),
  label: Nullable(Type.String({ description: 'The book title or link name; null when it was deleted.' })),
});

const EventTypesInput = Type.Array(Type.Union([Type.String(), Type.Object({ value: Type.String(), label: Type.Optional(Type.String()) })]), {
  minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length * 2,
  description: 'Values from GET /webhook-subscriptions/options (`event_types[].value`); the `{label, value}` objects a subscription shows are accepted too.',
});

export const WebhookSubscription = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  provider: Type.String({ description: `Body format: ${PROVIDER_VALUES.join(', ')}.` }),
  target_url: Type.String(),
  event_types: Type.Array(LabelValue),
  filters: Type.Array(Filter, { description: 'Empty: every event of the selected types. Otherwise an event is delivered when it matches any filter.' }),
  has_signing_secret: Type.Boolean({ description: 'Always true: every delivery is signed (Standard Webhooks). The secret is shown once, at creation and rotation.' }),
  is_active: Type.Boolean(),
  deactivated_reason: Nullable(Type.String({ description: 'Why the service deactivated it (410 Gone; five days of failures). Null when active or paused by the workspace.' })),
  deactivated_at: Nullable(DateTime),
  deliveries_count: Type.Integer({ description: 'Deliveries created since the subscription was, including those past retention.' }),
  created_at: DateTime,
  updated_at: DateTime,
}, { $id: 'WebhookSubscription', title: 'Webhook subscription' });

export const WebhookDelivery = Type.Object({
  id: Type.Integer(),
  subscription_id: Type.Integer(),
  event_id: Type.String({ description: 'The webhook-id header: the same on every retry and redelivery.' }),
  event_type: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')], {
    description: 'pending: the first attempt, or a retry at next_attempt_at; succeeded: a 2xx; failed: retries exhausted, 410 Gone, or the subscription deactivated or deleted.',
  }),
  attempts: Type.Integer(),
  payload: Type.Unknown({ description: 'The body exactly as the subscriber received it (parsed).' }),
  next_attempt_at: Nullable(DateTime),
  created_at: DateTime,
  delivered_at: Nullable(DateTime),
  response_status: Type.Optional(Type.Integer({ description: 'Of the last attempt.' })),
  response_body: Type.Optional(Type.String({ description: 'First 4 KB of the last answer.' })),
  error_message: Type.Optional(Type.String()),
}, { $id: 'WebhookDelivery', title: 'Webhook delivery' });

export const DeliveryAttempt = Type.Object({
  attempt: Type.Integer(), outcome: Type.String(), response_status: Nullable(Type.Integer()), response_body: Nullable(Type.String()),
  error_message: Nullable(Type.String()), duration_ms: Type.Integer(), attempted_at: DateTime,
});

export const CreateSubscriptionBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  target_url: Type.String({ minLength: 1, maxLength: 2048, description: 'https URL on a public address (plain http only for hosts in OUTBOUND_ALLOWED_HOSTS); no credentials.' }),
  event_types: EventTypesInput,
  filters: Type.Optional(Type.Array(FilterInput, { maxItems: 100 })),
  provider: Type.Optional(Type.Union(PROVIDER_VALUES.map((p) => Type.Literal(p)), { default: 'standard' })),
  is_active: Type.Optional(Type.Boolean({ default: true })),
}, { additionalProperties: false });

export const UpdateSubscriptionBody = Type.Partial(CreateSubscriptionBody, { additionalProperties: false });

export const SubscriptionParams = Type.Object({ subscription: Type.Integer({ minimum: 1, maximum: 2147483647 }) });
export const DeliveryParams = Type.Object({ subscription: Type.Integer({ minimum: 1, maximum: 2147483647 }), delivery: Type.Integer({ minimum: 1 }) });

export const ListSubscriptionsQuery = Type.Object(cursorQuery(100, 25));
export const ListDeliveriesQuery = Type.Object({
  ...cursorQuery(200, 25),
  status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')])),
  event_type: Type.Optional(Type.String({ maxLength: 64 })),
});
export const SampleEventsQuery = Type.Object({
  event_types: Type.Optional(Type.String({ maxLength: 1024, description: 'Comma-separated event types; all when absent.' })),
});
export const TestDeliveryBody = Type.Union([Type.Null(), Type.Object({
  event_type: Type.Optional(EventTypeValue),
}, { additionalProperties: false })]);

export const SampleDispatchBody = Type.Object({
  event: Type.Union([Type.Literal('flipbook.created'), Type.Literal('flipbook.updated'), Type.Literal('subscriber.added')]),
  payload: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 100, description: "Sent as the event's `data` when given; otherwise the documented example of the event." })),
  url: Type.String({ format: 'uri', maxLength: 2048 }),
}, { additionalProperties: false });

export const Envelope = Type.Object({
  type: Type.String(), timestamp: DateTime, data: Type.Unknown(),
}, { description: 'The Standard Webhooks envelope.' });

export const exampleSubscription = {
  id: 3, name: 'CRM: link clicks', provider: 'standard', target_url: 'https://hooks.example.com/flipbook',
  event_types: [{ label: 'Link clicked', value: 'link_clicked' }],
  filters: [{ type: 'book', value: 'q0bS0fGx2t9M1cFqR7xN2A', label: 'Spring catalogue' }],
  has_signing_secret: true, is_active: true, deactivated_reason: null, deactivated_at: null, deliveries_count: 1289,
  created_at: '2026-03-01T09:30:00.000Z', updated_at: '2026-03-01T09:30:00.000Z',
};
