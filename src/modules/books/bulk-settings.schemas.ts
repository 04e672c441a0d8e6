/** Request and response shapes of the bulk settings operations (spec parts 2 and 4, "Bulk settings batch"). */
import { Type, type Static } from 'typebox';
import { DateTime, Nullable } from '../../platform/http/schemas.ts';
import { AutoplayInterval, PageLayout, ReadingDirection } from './books.schemas.ts';
import { ANIMATIONS } from './books.settings.ts';

const Animation = Type.Union(ANIMATIONS.map((a) => Type.Literal(a)), { description: `One of ${ANIMATIONS.join(', ')}.` });
const Revision = Type.String({ pattern: '^[0-9a-f]{64}$', description: "The book's settings_revision as read from the summary: 64 lowercase hex characters." });

export const MAX_BULK_BOOKS = 100;
export const MAX_ACCESS_ENTRIES = 500;

/** Spec part 4, "Bulk settings `settings` fields", with their limits. Unknown fields are refused, so a typo never applies nothing silently. */
export const BulkSettings = Type.Object(
  {
    allow_fullscreen: Type.Optional(Type.Boolean()),
    animation_type: Type.Optional(Animation),
    autoplay_interval: Type.Optional(AutoplayInterval),
    background: Type.Optional(Nullable(Type.String({ maxLength: 2048, description: 'A CSS color or gradient, or an image URL; null removes it.' }))),
    copyright_enabled: Type.Optional(Type.Boolean()),
    description: Type.Optional(Nullable(Type.String({ maxLength: 50000, description: "The book's description; null removes it." }))),
    downloadable_pdf: Type.Optional(
      Type.Union([Type.Literal(false), Type.Literal('full'), Type.Literal('single'), Type.Literal('spread')], {
        description: '`false` turns downloads off; `full`, `single` or `spread` turn them on (the Book record shows `settings.downloadable: true`) and record the mode, which the summary reads back. The reader\'s download follows it: the whole document (`full`), the page shown (`single`) or the spread shown (`spread`: the cover alone, then 2-3, 4-5, …).',
      }),
    ),
    eod_enabled: Type.Optional(Type.Boolean({
      description: '`false` clears each book\'s access list. `true` without `eod_lists` keeps each book\'s list, and fails the item (`access_list_empty`) for a book that has none.',
    })),
    eod_lists: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), {
      maxItems: MAX_ACCESS_ENTRIES,
      description: "Replaces each book's access list: e-mail addresses and domains (`example.com` or `@example.com`). An empty array clears the lists.",
    })),
    flip_sound: Type.Optional(Type.Boolean()),
    image_display: Type.Optional(Type.Union([Type.Literal('repeat'), Type.Literal('center/cover')])),
    made_with_badge_enabled: Type.Optional(Type.Boolean({ description: 'Only plans with remove_made_with_badge can turn the badge off; on others the effective value stays true.' })),
    magic_link_error_message: Type.Optional(Type.String({ maxLength: 1000 })),
    magic_link_message: Type.Optional(Type.String({ maxLength: 1000 })),
    mobile_animation_type: Type.Optional(Animation),
    open_fullscreen_by_default: Type.Optional(Type.Boolean()),
    page_layout: Type.Optional(PageLayout),
    pdf_password: Type.Optional(Nullable(Type.String({ maxLength: 255, description: 'Protects downloads; an empty string or null removes it. Never returned.' }))),
    pdf_privacy_status: Type.Optional(Type.String({ maxLength: 50 })),
    reading_direction: Type.Optional(ReadingDirection),
    share_social_media: Type.Optional(Type.Boolean()),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "The book's name." })),
    watermark: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type BulkSettingsInput = Static<typeof BulkSettings>;

export const CreateBulkBatchBody = Type.Object({
  books: Type.Array(
    Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: "The book's random_id." }), settings_revision: Revision }),
    { minItems: 1, maxItems: MAX_BULK_BOOKS, description: 'The books to change, 1-100, each once, with the revision the client last read. Applied in this order.' },
  ),
  settings: BulkSettings,
});

export const SummaryBody = Type.Object({
  book_ids: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: MAX_BULK_BOOKS, description: 'Random ids of 1-100 books, each once.' }),
});

export const BulkBatchParams = Type.Object({ batch: Type.String({ minLength: 1, maxLength: 64 }) });

const ItemStatus = Type.Union(['pending', 'running', 'succeeded', 'failed', 'cancelled'].map((s) => Type.Literal(s)), {
  description: '`pending` → `running` → `succeeded` | `failed`; `cancelled` when the batch was cancelled before the item started.',
});

export const BulkItem = Type.Object({
  book_id: Type.String({ description: "The book's random_id." }),
  status: ItemStatus,
  error: Nullable(Type.Object({
    code: Type.String({ description: '`stale_revision` (the book changed after the batch was created), `book_not_found` (deleted), `access_list_empty`, `invalid_access_list`.' }),
    message: Type.String(),
  })),
  expected_settings_revision: Type.String({ description: 'The revision the item applies over; any other revision fails it as `stale_revision`.' }),
  settings_revision_before: Nullable(Type.String({ description: "The book's revision when the item ran." })),
  settings_revision_after: Nullable(Type.String({ description: "The book's revision after the item's write (null unless succeeded)." })),
  started_at: Nullable(DateTime),
  finished_at: Nullable(DateTime),
});

export const BulkBatch = Type.Object(
  {
    id: Type.String(),
    status: Type.Union(['queued', 'running', 'completed', 'cancelled'].map((s) => Type.Literal(s)), {
      description: '`queued` → `running` → `completed` (every item finished; some may have failed: retry them); `cancelled` after DELETE (items already applied stay).',
    }),
    retry_of_batch_id: Nullable(Type.String({ description: 'The batch this one retries (set by POST …/retry).' })),
    fields: Type.Array(Type.String(), { description: 'The settings fields the batch changes.' }),
    settings: Type.Record(Type.String(), Type.Unknown(), { description: 'The changes, as sent; pdf_password is never returned (it shows in `fields`).' }),
    created_at: DateTime,
    started_at: Nullable(DateTime),
    finished_at: Nullable(DateTime),
    cancelled_at: Nullable(DateTime),
    items: Type.Array(BulkItem, { description: 'One per book, in application order.' }),
    progress: Type.Object({
      finished: Type.String({ description: 'Items finished (succeeded, failed or cancelled) out of the total, as "37/100".' }),
      percent: Type.Integer({ minimum: 0, maximum: 100, description: 'Finished items as a whole percentage (rounded down).' }),
      total: Type.Integer(),
      succeeded: Type.Integer(),
      failed: Type.Integer(),
      cancelled: Type.Integer(),
      pending: Type.Integer({ description: 'Items not finished yet (pending or running).' }),
      items: Type.Array(Type.Object({ book_id: Type.String(), status: ItemStatus }), { description: 'The per-item list: each book and its status, in order.' }),
    }),
  },
  { $id: 'BulkSettingsBatch', title: 'BulkSettingsBatch' },
);

export const SummaryResponse = Type.Object({
  books: Type.Array(Type.Object({
    id: Type.String({ description: "The book's random_id." }),
    title: Type.String(),
    settings_revision: Type.String({ description: 'Send it back in POST /books/bulk-settings/batches.' }),
  })),
  settings: Type.Object({
    common: Type.Record(Type.String(), Type.Unknown(), { description: 'Fields every book has the same value for, in the bulk `settings` field names (`has_pdf_password` instead of the password).' }),
    differing: Type.Record(Type.String(), Type.Array(Type.Object({ book_id: Type.String(), value: Type.Unknown() })), {
      description: 'Fields the books disagree on, with each book\'s value.',
    }),
  }),
});
