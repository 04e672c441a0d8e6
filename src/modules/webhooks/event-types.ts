/**
 * The event types a subscription can select, where each comes from, and the
 * `data` each carries (documented in the OpenAPI document's webhooks section
 * and used as the example where a workspace has no real event yet).
 *
 * One value per kind of happening: the spec lists some reader actions both as
 * interaction events and as audit events (link_clicked, document_downloaded,
 * …); the reader's audit copies are the same occurrence, so each is delivered
 * once, from the interaction event. The access-gate decisions (access_*) exist
 * only as audit events.
 */
import { Type, type TSchema } from 'typebox';

export const DOMAIN_EVENT_TYPES = ['flipbook.created', 'flipbook.updated', 'flipbook.deleted', 'flipbook.version_published', 'subscriber.added'] as const;
export const INTERACTION_EVENT_TYPES = [
  'session_started', 'page_segment_completed', 'link_clicked', 'document_downloaded', 'lead_form_submitted',
  'form_widget_opened', 'checkout_widget_opened', 'checkout_redirect_clicked', 'session_ended',
] as const;
export const ACCESS_EVENT_TYPES = ['access_requested', 'access_granted', 'access_rejected'] as const;

export const WEBHOOK_EVENT_TYPES = [...DOMAIN_EVENT_TYPES, ...INTERACTION_EVENT_TYPES, ...ACCESS_EVENT_TYPES] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
/** What a test delivery carries when the subscription is asked to prove it works. */
export const TEST_EVENT_TYPE = 'webhook.test';

export function isWebhookEventType(value: string): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}

export const EVENT_LABELS: Record<WebhookEventType, string> = {
  'flipbook.created': 'Flipbook created',
  'flipbook.updated': 'Flipbook updated',
  'flipbook.deleted': 'Flipbook deleted',
  'flipbook.version_published': 'Flipbook version published',
  'subscriber.added': 'Access list entry added',
  session_started: 'Reader session started',
  page_segment_completed: 'Page read (segment completed)',
  link_clicked: 'Link clicked',
  document_downloaded: 'Document downloaded',
  lead_form_submitted: 'Lead form submitted',
  form_widget_opened: 'Form widget opened',
  checkout_widget_opened: 'Checkout widget opened',
  checkout_redirect_clicked: 'Checkout redirect clicked',
  session_ended: 'Reader session ended',
  access_requested: 'Access requested (sign-in link sent)',
  access_granted: 'Access granted',
  access_rejected: 'Access rejected',
};

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const BookEventData = Type.Object({
  book_id: Type.String({ description: "The book's random_id." }),
  fields: Type.Optional(Type.Array(Type.String(), { description: 'flipbook.updated: the fields that changed.' })),
  batch_id: Type.Optional(Type.String({ description: 'flipbook.created: the upload batch.' })),
  name: Type.Optional(Type.String({ description: 'flipbook.created: the document name.' })),
  version: Type.Optional(Type.Integer({ description: 'flipbook.version_published: the version now current.' })),
  previous_version: Type.Optional(Type.Integer({ description: 'flipbook.version_published: the version it replaced.' })),
  page_count: Type.Optional(Type.Integer({ description: 'flipbook.version_published: the new page count.' })),
  reason: Type.Optional(Type.String({ description: 'flipbook.version_published: `upload` (a new version finished converting) or `restore`.' })),
}, { additionalProperties: true });

const SubscriberData = Type.Object({
  id: Type.Integer(), book_id: Type.String(), type: Type.String({ description: 'email | domain' }), email: Type.String(), created_at: Type.String({ format: 'date-time' }),
}, { additionalProperties: true });

/** Spec part 2, Interaction event. */
export const InteractionEventData = Type.Object({
  id: Type.Integer(), book_id: Type.String({ description: "The book's random_id." }), viewer_id: Nullable(Type.Integer()),
  tracked_link_id: Nullable(Type.Integer()), session_id: Type.String(), event_type: Type.String(),
  page_number: Nullable(Type.Integer()), active_ms: Nullable(Type.Integer()), active_seconds: Nullable(Type.Number()),
  exit_reason: Type.String(), source_type: Type.String(), source_host: Nullable(Type.String()),
  country: Nullable(Type.String()), region: Nullable(Type.String()), city: Nullable(Type.String()),
  latitude: Nullable(Type.Number()), longitude: Nullable(Type.Number()), metadata: Nullable(Type.Array(Type.Unknown())),
  occurred_at: Type.String({ format: 'date-time' }), created_at: Type.String({ format: 'date-time' }),
  viewer_email: Type.Optional(Type.String({ description: 'Present when the reader is identified (access gate or lead form).' })),
});

/** Spec part 2, Audit log event. */
export const AuditEventData = Type.Object({
  id: Type.String(), source: Type.String(), source_event_id: Type.Integer(), book_id: Type.String(), viewer_id: Nullable(Type.Integer()),
  viewer_email: Type.String(), event_type: Type.String(), page_number: Nullable(Type.Integer()), active_ms: Nullable(Type.Integer()),
  active_seconds: Nullable(Type.Number()), reason: Type.String(), metadata: Type.Union([Type.Null(), Type.Object({}, { additionalProperties: true }), Type.String()]),
  occurred_at: Nullable(Type.String({ format: 'date-time' })),
});

export function dataSchemaOf(type: WebhookEventType): TSchema {
  if (type === 'subscriber.added') return SubscriberData;
  if ((DOMAIN_EVENT_TYPES as readonly string[]).includes(type)) return BookEventData;
  if ((ACCESS_EVENT_TYPES as readonly string[]).includes(type)) return AuditEventData;
  return InteractionEventData;
}

const SAMPLE_BOOK = 'sampleBook0000000000AA';

/** The documented example `data` of each type (used where the workspace has no real event yet, and by test deliveries). */
export function exampleData(type: WebhookEventType | typeof TEST_EVENT_TYPE): Record<string, unknown> {
  switch (type) {
    case 'flipbook.created': return { book_id: SAMPLE_BOOK, batch_id: 'bat_sample000000000000', name: 'Spring catalogue.pdf' };
    case 'flipbook.updated': return { book_id: SAMPLE_BOOK, fields: ['status', 'title'] };
    case 'flipbook.deleted': return { book_id: SAMPLE_BOOK };
    case 'flipbook.version_published': return { book_id: SAMPLE_BOOK, version: 2, previous_version: 1, page_count: 24, reason: 'upload' };
    case 'subscriber.added': return { id: 1, book_id: SAMPLE_BOOK, type: 'email', email: 'reader@example.com', created_at: '2026-03-01T09:30:00.000Z' };
    case 'access_requested':
    case 'access_granted':
    case 'access_rejected':
      return {
        id: 'gate-1', source: 'gate', source_event_id: 1, book_id: SAMPLE_BOOK, viewer_id: 7, viewer_email: 'reader@example.com', event_type: type,
        page_number: null, active_ms: null, active_seconds: null, reason: type === 'access_rejected' ? 'not_listed' : '', metadata: null,
        occurred_at: '2026-03-01T09:30:00.000Z',
      };
    case TEST_EVENT_TYPE: return { message: 'A test delivery from Flipbook: your endpoint is reachable and verifies signatures.' };
    default:
      return {
        id: 1, book_id: SAMPLE_BOOK, viewer_id: null, tracked_link_id: 12, session_id: '6f1c7c1e-2a4b-4d8e-9a51-0c6a3f5b7d21', event_type: type,
        page_number: type === 'session_started' || type === 'session_ended' ? null : 3,
        active_ms: type === 'page_segment_completed' ? 12000 : null, active_seconds: type === 'page_segment_completed' ? 12 : null,
        exit_reason: type === 'session_ended' ? 'closed' : '', source_type: 'tracked_link', source_host: 'newsletter.example.com',
        country: 'DE', region: 'Berlin', city: 'Berlin', latitude: 52.52, longitude: 13.405,
        metadata: type === 'link_clicked' ? [{ url: 'https://shop.example.com/offer' }] : null,
        occurred_at: '2026-03-01T09:30:00.000Z', created_at: '2026-03-01T09:30:00.412Z',
      };
  }
}
