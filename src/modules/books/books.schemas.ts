/** Request and response shapes of the books and batches operations (spec parts 2 and 4). */
import { Type } from 'typebox';
import { DateTime, Nullable } from '../../platform/http/schemas.ts';
import { ANIMATIONS, AUTOPLAY_MAX, AUTOPLAY_MIN, PAGE_LAYOUTS, READING_DIRECTIONS } from './books.settings.ts';
import { BOOK_SORTS } from './books.service.ts';

const Animation = Type.Union(ANIMATIONS.map((a) => Type.Literal(a)), { description: `One of ${ANIMATIONS.join(', ')}.` });
const literalUnion = (values: readonly string[], description?: string) =>
  Type.Union(values.map((v) => Type.Literal(v)), description ? { description } : {});

/** The reader defaults of issue 16, shared with the bulk settings schema. */
export const ReadingDirection = literalUnion(READING_DIRECTIONS, 'How the book reads: `ltr` (default) or `rtl` (the first page on the right, turning to the left, as Arabic, Hebrew or manga). The reader URL\'s `?dir=ltr|rtl` overrides it.');
export const PageLayout = literalUnion(PAGE_LAYOUTS, '`auto` (default): two pages side by side when the screen is wide enough, one otherwise; `single`: always one page; `double`: two pages whenever the screen is at least 600 px wide. Readers can switch on wide screens; `?layout=` overrides it.');
export const AutoplayInterval = Nullable(Type.Integer({
  minimum: AUTOPLAY_MIN, maximum: AUTOPLAY_MAX,
  description: `Seconds per view of the slideshow the reader opens with, ${AUTOPLAY_MIN}-${AUTOPLAY_MAX}; null (default): no slideshow. Readers can start and stop it (and pick the interval) themselves; \`?autoplay=N\` overrides it.`,
}));

export const BookSettings = Type.Object({
  background: Nullable(Type.String()),
  downloadable: Type.Boolean(),
  made_with_badge_enabled: Type.Boolean({ description: 'Effective value: always true on plans that cannot remove the badge (free).' }),
  fullscreen_enabled: Type.Boolean(),
  open_fullscreen_by_default: Type.Boolean(),
  sound_enabled: Type.Boolean(),
  copyright_enabled: Type.Boolean(),
  share_social_media: Type.Boolean(),
  privacy: Nullable(Type.String()),
  image_display: Nullable(Type.String()),
  animation_type: Type.String(),
  mobile_animation_type: Nullable(Type.String()),
  watermark: Nullable(Type.String()),
  eod_enabled: Type.Boolean({ description: 'Read-only: true while the book has a subscriber access list.' }),
  domains_enabled: Type.Boolean({ description: 'Read-only: true while the book has an embed-domain list.' }),
  accessibility_enabled: Type.Boolean(),
  auto_links_enabled: Type.Boolean(),
  magic_link_message: Nullable(Type.String()),
  magic_link_error_message: Nullable(Type.String()),
  reading_direction: ReadingDirection,
  page_layout: PageLayout,
  autoplay_interval: AutoplayInterval,
  has_pdf_password: Type.Boolean({ description: 'Whether a download password is set; the password is never returned.' }),
});

export const Book = Type.Object(
  {
    random_id: Type.String({ description: 'The only public identifier of a book (22 URL-safe characters).' }),
    batch_id: Nullable(Type.String()),
    external_catalog_id: Nullable(Type.Integer()),
    name: Type.String(),
    description: Nullable(Type.String()),
    status: Nullable(Type.String({ description: '`draft`, `publish` or `schedule`, as a reader sees it now: a book past its `expires_at` reads `draft`; a scheduled book whose `published_date` has come reads `publish`.' })),
    page_images_status: Type.String({ description: '`processing` while pages render, then `ready` or `failed`.' }),
    page_count: Type.Integer(),
    preview_url: Nullable(Type.String({ description: 'The public reader.' })),
    thumbnail_url: Nullable(Type.String({ description: 'The cover (page 1, 320 px wide); null until page 1 is rendered.' })),
    embed_code: Nullable(Type.String({ description: 'A responsive, lazily loaded iframe snippet; its height follows the reader through a resize message (a few lines of script), with an aspect-ratio fallback without script.' })),
    published_date: Nullable(Type.String()),
    expires_at: Nullable(Type.String()),
    billing_expires_at: Nullable(Type.String()),
    created_at: Nullable(DateTime),
    updated_at: Nullable(DateTime),
    settings: BookSettings,
    settings_revision: Type.String({ description: 'A digest of the settings, name, description and download password (64 hex characters); send it back as `settings_revision` in PUT /books/{book} so that a change made meanwhile elsewhere answers 409 instead of being overwritten.' }),
  },
  { $id: 'Book', title: 'Book' },
);

export const exampleBook = {
  random_id: 'q0bS0fGx2t9M1cFqR7xN2A',
  batch_id: 'bat_8kq2JmWl0b6vXJ1s',
  external_catalog_id: null,
  name: 'Spring catalogue 2026',
  description: null,
  status: 'publish',
  page_images_status: 'ready',
  page_count: 24,
  preview_url: 'https://books.example.com/read/q0bS0fGx2t9M1cFqR7xN2A',
  thumbnail_url: 'https://books.example.com/assets/books/q0bS0fGx2t9M1cFqR7xN2A/Zt81kQ/p1-w320.webp',
  embed_code: '<div style="position:relative;width:100%;aspect-ratio:1.4133;min-height:min(92vh,calc(100vw * 1.4151 + 100px));max-height:100vh"><iframe src="https://books.example.com/read/q0bS0fGx2t9M1cFqR7xN2A" title="Spring catalogue 2026" loading="lazy" allow="fullscreen" allowfullscreen style="position:absolute;inset:0;width:100%;height:100%;border:0"></iframe></div><script>(function(b){var f=b.firstChild;addEventListener("message",function(e){var d=e.data;if(e.source===f.contentWindow&&d&&d.type==="flipbook:resize"&&d.height>0){b.style.aspectRatio="auto";b.style.minHeight="0";b.style.height=Math.min(d.height,innerHeight)+"px"}})})(document.currentScript.previousElementSibling)</script>',
  published_date: '2026-03-01T09:00:00.000Z',
  expires_at: null,
  billing_expires_at: null,
  created_at: '2026-02-27T16:20:00.000Z',
  updated_at: '2026-03-01T09:00:00.000Z',
  settings: {
    background: null, downloadable: true, made_with_badge_enabled: false, fullscreen_enabled: true, open_fullscreen_by_default: false,
    sound_enabled: false, copyright_enabled: false, share_social_media: true, privacy: null, image_display: null, animation_type: 'flip',
    mobile_animation_type: null, watermark: null, eod_enabled: false, domains_enabled: false, accessibility_enabled: true,
    auto_links_enabled: true, magic_link_message: null, magic_link_error_message: null, reading_direction: 'ltr', page_layout: 'auto',
    autoplay_interval: null, has_pdf_password: false,
  },
  settings_revision: '9b74c9897bac770ffc029102a200c5de5d4a7c3c1e0e3c1b1f7d2e8a4c6b5a31',
};

export const BookParams = Type.Object({ book: Type.String({ minLength: 1, maxLength: 64, description: "The book's random_id." }) });

export const ListBooksQuery = Type.Object({
  'filter[status]': Type.Optional(literalUnion(['publish', 'draft', 'schedule'])),
  'filter[name]': Type.Optional(Type.String({ maxLength: 255, description: 'Case-insensitive substring of the name.' })),
  sort: Type.Optional(literalUnion(BOOK_SORTS, 'Default `-created_at` (newest first); ties are ordered by creation.')),
  cursor: Type.Optional(Type.String({ maxLength: 512 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 25, description: 'Page size, 1-200; default 25.' })),
});

export const UpdateBookBody = Type.Object({
  status: literalUnion(['draft', 'schedule', 'publish'], '`publish` makes the book public now (published_date defaults to now); `schedule` needs a future `published_date` and publishes then; `draft` unpublishes.'),
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  slug: Type.Optional(Type.String({ maxLength: 255 })),
  description: Type.Optional(Type.String({ maxLength: 50000 })),
  background: Type.Optional(Type.String({ maxLength: 2048 })),
  watermark: Type.Optional(Type.String({ maxLength: 2048 })),
  pdf_password: Type.Optional(Type.String({ maxLength: 255, description: 'Protects downloads; an empty string removes it. Never returned.' })),
  pdf_privacy_status: Type.Optional(Type.String({ maxLength: 50 })),
  magic_link_message: Type.Optional(Type.String({ maxLength: 1000 })),
  magic_link_error_message: Type.Optional(Type.String({ maxLength: 1000 })),
  expires_at: Type.Optional(Type.String({ format: 'date-time', description: 'When the book is hard-unpublished (it stops being public at that instant).' })),
  published_date: Type.Optional(Type.String({ format: 'date-time' })),
  animation_type: Type.Optional(Animation),
  mobile_animation_type: Type.Optional(Animation),
  image_display: Type.Optional(literalUnion(['repeat', 'center/cover'])),
  accessibility_enabled: Type.Optional(Type.Boolean()),
  allow_fullscreen: Type.Optional(Type.Boolean()),
  auto_links_enabled: Type.Optional(Type.Boolean()),
  copyright_enabled: Type.Optional(Type.Boolean()),
  downloadable_pdf: Type.Optional(Type.Boolean()),
  flip_sound: Type.Optional(Type.Boolean()),
  made_with_badge_enabled: Type.Optional(Type.Boolean({ description: 'Only plans with remove_made_with_badge can turn the badge off; on others the effective value stays true.' })),
  open_fullscreen_by_default: Type.Optional(Type.Boolean()),
  share_social_media: Type.Optional(Type.Boolean()),
  reading_direction: Type.Optional(ReadingDirection),
  page_layout: Type.Optional(PageLayout),
  autoplay_interval: Type.Optional(AutoplayInterval),
  domain_lists: Type.Optional(Type.Array(Type.String({ maxLength: 255 }), { maxItems: 500, description: 'Accepted for compatibility and ignored: manage embed domains with /books/{book}/embed-domains.' })),
  eod_lists: Type.Optional(Type.Array(Type.String({ maxLength: 255 }), { maxItems: 500, description: 'Accepted for compatibility and ignored: manage the access list with /subscribers.' })),
  eod_enabled: Type.Optional(Type.Unknown({ description: 'Read-only; ignored.' })),
  domains_enabled: Type.Optional(Type.Unknown({ description: 'Read-only; ignored.' })),
  settings_revision: Type.Optional(Type.String({ maxLength: 64, description: "Beyond the spec: the book's `settings_revision` as last read. When it is not the book's revision now (a change was made meanwhile), nothing is written and the answer is 409 `ConflictException` with `details.current_settings_revision`." })),
});

export const BatchStatus = literalUnion(
  ['queued', 'processing', 'completed', 'failed', 'cancelled'],
  '`queued` → `processing` → `completed` | `failed`; `cancelled` when DELETE /batches/{batchId} stops it (or its book is deleted) while in flight. ' +
    '`completed` means every page is drawn: a book is readable earlier, while the batch is still `processing` (see `stage` and `readable_at`).',
);

export const BatchStage = literalUnion(
  ['queued', 'converting', 'rendering', 'done', 'failed', 'cancelled'],
  'Where the conversion is: `queued`; `converting` (the document is read: every page\'s size, text and links, and the first pages drawn); ' +
    '`rendering` (the book is readable, its page_images_status `ready`: every page can be served, those not drawn yet on their first request, ' +
    'while the rest are drawn in the background; the batch is still `processing`); `done` (every page drawn, status `completed`); `failed`, `cancelled`. ' +
    'A new version (POST /books/{book}/versions) and an uploaded image go from `converting` to `done`: a version is shown only once every page is drawn.',
);

export const UploadBatch = Type.Object(
  {
    id: Type.String(),
    status: BatchStatus,
    progress: Type.Object({
      total: Type.Integer({ description: 'Pages of the document (0 until it is opened).' }),
      completed: Type.Integer({ description: 'Pages drawn (their images stored).' }),
      pending: Type.Integer({ description: 'Pages still to draw (readable already once `stage` is `rendering`).' }),
      failed: Type.Integer({ description: 'Pages that could not be rendered (shown blank).' }),
    }),
    stage: BatchStage,
    readable_at: Type.Union([DateTime, Type.Null()], { description: 'When the book became readable (every page servable), before its last page was drawn; null until then, and for a new version or an image.' }),
    total_pages: Type.Integer({ description: 'Pages of the document (as progress.total).' }),
    rendered_pages: Type.Integer({ description: 'Pages drawn so far, blank ones included (progress.completed + progress.failed).' }),
    books: Type.Array(Type.Ref('Book'), { description: 'The book the upload produces, from the start; its page_images_status and page_count follow the conversion.' }),
    error: Nullable(Type.Object({ code: Type.String(), message: Type.String({ description: 'Written for the person who uploaded the file.' }) })),
    warnings: Type.Array(Type.Ref('ConversionWarning'), {
      description:
        'What the conversion could not reproduce faithfully, while the batch still completed: content left out of a page (`image_too_large`, `image_damaged`; `font_not_drawn`: text in a font the renderer could not draw), ' +
        'pages delivered blank (`page_failed`), fonts the document asks for that this server does not have (`fonts_substituted`); for books made from content, a product image drawn as a placeholder (`image_unavailable`) and item keys the catalog does not hold (`items_missing`). ' +
        'Empty when the pages are faithful. At most 100 entries.',
    }),
    original_filename: Nullable(Type.String()),
    source_format: Nullable(Type.String({ description: 'What the bytes are: pdf, docx, doc, odt, xlsx, xls, ods, pptx, ppt, odp, jpeg or png.' })),
    created_at: DateTime,
    finished_at: Nullable(DateTime),
  },
  { $id: 'UploadBatch', title: 'UploadBatch' },
);

export const UploadFields = Type.Object({
  original_filename: Type.Optional(Type.String({ maxLength: 255 })),
  status: Type.Optional(literalUnion(['draft', 'publish'])),
  auto_links_enabled: Type.Optional(Type.Boolean()),
  password: Type.Optional(Type.String({ maxLength: 255, description: 'Beyond the spec: the password that opens an encrypted PDF. Used for conversion only.' })),
});

export const UploadBody = Type.Object({
  'files[]': Type.String({ format: 'binary', description: 'The document: PDF, DOCX, DOC, ODT, XLSX, XLS, ODS, PPTX, PPT, ODP, JPG or PNG, detected from its content. One file per request.' }),
  ...UploadFields.properties,
});

export const ConversionWarning = Type.Object(
  {
    code: Type.String({ description: '`image_too_large`, `image_damaged`, `font_not_drawn`, `page_failed`, `fonts_substituted`, …' }),
    message: Type.String({ description: 'Written for the person who uploaded the file: what is missing and what to do.' }),
    page: Nullable(Type.Integer({ description: 'The page concerned; null for the whole document.' })),
  },
  { $id: 'ConversionWarning', title: 'ConversionWarning', examples: [{ code: 'image_too_large', message: 'An image on page 12 is too large to draw (12000 × 16000 px) and was left out.', page: 12 }] },
);

/** An outline (table of contents) entry: a page of the book or an external link. */
export const OutlineEntry = Type.Object(
  {
    title: Type.String(),
    page: Nullable(Type.Integer({ description: 'The 1-based page the entry opens; null for an external link or an entry that points nowhere.' })),
    url: Type.Optional(Type.String({ description: 'Set instead of a page when the entry opens a web or mail address (an external link).' })),
    children: Type.Array(Type.Ref('OutlineEntry')),
  },
  { $id: 'OutlineEntry', title: 'OutlineEntry' },
);

export const Page = Type.Object({
  number: Type.Integer(),
  width: Type.Number({ description: 'Page width in PDF points (1/72 in), after rotation.' }),
  height: Type.Number(),
  images: Type.Array(Type.Object({ width: Type.Integer(), height: Type.Integer(), url: Type.String() }), { description: 'The page at each width (320, 1024, 2048 px), smallest first. Immutable URLs; the 2048 px image, and every width of a page not drawn yet (`drawn: false`), is drawn on its first request (slower once), then served from storage.' }),
  drawn: Type.Boolean({ description: 'Whether the conversion has drawn this page\'s images yet. false while a readable book\'s remaining pages are drawn in the background: its images are still served, drawn on their first request (a 429 with Retry-After when the server is busy drawing).' }),
  text: Type.Array(Type.Object({
    text: Type.String({ description: 'In reading (logical) order, right-to-left scripts included; control characters removed.' }),
    x: Type.Number(), y: Type.Number(), width: Type.Number(), height: Type.Number(),
    dir: Type.Optional(Type.Literal('rtl', { description: 'The run reads right to left: its first character is at the far end of its box.' })),
    angle: Type.Optional(Type.Number({ description: 'Clockwise angle of the run on the displayed page (90: reads downwards, 180: upside down, 270: upwards); absent for horizontal text.' })),
  }), {
    description: 'Text runs in reading order, with their box as fractions (0-1) of the displayed page (after /Rotate), origin top-left.',
  }),
  links: Type.Array(
    Type.Object({
      x: Type.Number(), y: Type.Number(), width: Type.Number(), height: Type.Number(),
      url: Type.Optional(Type.String()),
      page: Type.Optional(Type.Integer()),
      source: Type.String({ description: '`annotation` (a link in the document) or `text` (a URL or address found in the text, when auto_links_enabled).' }),
    }),
  ),
  error: Nullable(Type.String({ description: 'Why the page is blank, when it could not be rendered.' })),
  warnings: Type.Array(Type.Object({ code: Type.String(), message: Type.String() }), { description: 'What is missing from this page although it rendered (see the batch `warnings`).' }),
});

/** POST /books/{book}/versions: one document, the upload's fields that concern a document (the book's own settings stay). */
export const VersionFields = Type.Object({
  original_filename: UploadFields.properties.original_filename,
  password: UploadFields.properties.password,
});
export const VersionUploadBody = Type.Object({
  'files[]': Type.String({ format: 'binary', description: 'The new document: the same types and limits as an upload (POST /books). One file per request.' }),
  ...VersionFields.properties,
});

export const VersionParams = Type.Object({
  book: BookParams.properties.book,
  version: Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'The version number (1 for the first upload).' }),
});

export const BookVersion = Type.Object(
  {
    number: Type.Integer({ description: '1 for the first upload, then one more per new document, in the order they were received.' }),
    status: literalUnion(['converting', 'ready', 'failed', 'cancelled', 'expired'], '`converting` until its pages are ready; `expired` once the kept-versions limit removed its files (it can no longer be restored).'),
    current: Type.Boolean({ description: 'Whether readers see this version now.' }),
    created_at: DateTime,
    created_by: Nullable(Type.Object({
      type: literalUnion(['api_key', 'person', 'oauth', 'system']),
      name: Nullable(Type.String({ description: "The key's display prefix, the person's e-mail or the OAuth app's name." })),
    }, { description: 'Who uploaded it; null for a first version uploaded before versions were recorded.' })),
    source_filename: Nullable(Type.String()),
    source_format: Nullable(Type.String()),
    page_count: Type.Integer(),
    batch_id: Nullable(Type.String({ description: 'The upload batch that converted it.' })),
    published_at: Nullable(Type.String({ format: 'date-time', description: 'When it last became current; null if it never was.' })),
  },
  {
    $id: 'BookVersion', title: 'BookVersion',
    examples: [{
      number: 2, status: 'ready', current: true, created_at: '2026-03-02T10:00:00.000Z', created_by: { type: 'api_key', name: 'fb_live_3kT9' },
      source_filename: 'catalog-fixed.pdf', source_format: 'pdf', page_count: 24, batch_id: 'bat_sample000000000000', published_at: '2026-03-02T10:00:41.000Z',
    }],
  },
);
