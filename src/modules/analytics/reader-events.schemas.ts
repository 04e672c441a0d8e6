/**
 * What the reader page sends to POST /read/:randomId/events (a batch of
 * interaction events) and POST /read/:randomId/lead (a lead form). Public
 * endpoints: every bound is explicit.
 */
import { Type, type Static } from 'typebox';
import { TRACKED_LINK_SLUG } from './tracked-links.schemas.ts';

/** Spec part 2, interaction event_type. */
export const INTERACTION_EVENT_TYPES = [
  'session_started',
  'page_segment_completed',
  'link_clicked',
  'document_downloaded',
  'lead_form_submitted',
  'form_widget_opened',
  'checkout_widget_opened',
  'checkout_redirect_clicked',
  'session_ended',
] as const;
export type InteractionEventType = (typeof INTERACTION_EVENT_TYPES)[number];

/** closed: the page went away; navigated: it went away through a link or download; hidden: the tab was hidden and not seen again; idle: no activity for long. */
export const EXIT_REASONS = ['closed', 'navigated', 'hidden', 'idle'] as const;

export const MAX_EVENTS_PER_BATCH = 200;
/** One page on screen for longer than an hour is not reading. */
export const MAX_SEGMENT_MS = 60 * 60 * 1000;
export const MAX_SESSION_MS = 24 * 60 * 60 * 1000;

const SessionId = Type.String({ pattern: '^[A-Za-z0-9_-]{16,64}$', description: 'Random per page load (a UUID).' });

const Metadata = Type.Record(
  Type.String({ pattern: '^[a-z][a-z0-9_]{0,31}$' }),
  Type.Union([Type.String({ maxLength: 2048 }), Type.Number(), Type.Boolean()]),
  { maxProperties: 8, additionalProperties: false, description: 'A few facts about the event: url, label, …' },
);

export const ReaderEvent = Type.Object({
  seq: Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Sequence number within the session; a re-sent event is stored once.' }),
  type: Type.Union(INTERACTION_EVENT_TYPES.map((t) => Type.Literal(t))),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  active_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SEGMENT_MS })),
  exit_reason: Type.Optional(Type.Union(EXIT_REASONS.map((r) => Type.Literal(r)))),
  at: Type.Optional(Type.Integer({ minimum: 0, maximum: 8_640_000_000_000, description: 'When it happened, ms since the epoch (clamped to the last 24 hours and now).' })),
  metadata: Type.Optional(Metadata),
}, { additionalProperties: false });

export const EventBatch = Type.Object({
  session_id: SessionId,
  active_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SESSION_MS, description: 'Active time of the whole session so far (cumulative; the largest value received is kept).' })),
  events: Type.Array(ReaderEvent, { minItems: 1, maxItems: MAX_EVENTS_PER_BATCH }),
  context: Type.Optional(Type.Object({
    tl: Type.Optional(Type.String({ pattern: TRACKED_LINK_SLUG })),
    embedded: Type.Optional(Type.Boolean()),
    referrer: Type.Optional(Type.String({ maxLength: 2048, description: 'The embedding page (when embedded) or the referring page; only its host is kept.' })),
    ver: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'The book version the reader shows (docs/book-versions.md); the current one when absent or unknown.' })),
  }, { additionalProperties: false })),
}, { additionalProperties: false });

export type EventBatchInput = Static<typeof EventBatch>;
export type ReaderEventInput = Static<typeof ReaderEvent>;

export const LeadSubmission = Type.Object({
  session_id: SessionId,
  seq: Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'The sequence number of the lead_form_submitted event in the session.' }),
  name: Type.Optional(Type.String({ maxLength: 255 })),
  email: Type.String({ minLength: 3, maxLength: 255 }),
  phone: Type.Optional(Type.String({ maxLength: 64 })),
  company: Type.Optional(Type.String({ maxLength: 255 })),
  message: Type.Optional(Type.String({ maxLength: 5000 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  context: Type.Optional(EventBatch.properties.context),
}, { additionalProperties: false });

export type LeadSubmissionInput = Static<typeof LeadSubmission>;
