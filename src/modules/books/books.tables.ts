import { boolean, index, integer, jsonb, pgTable, primaryKey, real, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { workspaces } from '../workspaces/workspaces.tables.ts';
import type { ConversionWarning, OutlineEntry, PageLink, TextItem } from '../conversion/conversion.types.ts';

/** A warning as the batch keeps it: with its page (null for the whole document). */
export interface StoredWarning extends ConversionWarning {
  page: number | null;
}

/** Warnings a book's source records before its conversion (books made from content): a conversion attempt keeps them. */
export const SOURCE_WARNING_CODES = ['image_unavailable', 'items_missing'] as const;
import { instant } from '../../platform/db/columns.ts';


/** Viewer settings stored per book; see books.settings.ts for defaults and the API mapping. */
export interface StoredBookSettings {
  background: string | null;
  downloadable: boolean;
  made_with_badge_enabled: boolean;
  fullscreen_enabled: boolean;
  open_fullscreen_by_default: boolean;
  sound_enabled: boolean;
  copyright_enabled: boolean;
  share_social_media: boolean;
  privacy: string | null;
  image_display: string | null;
  animation_type: string;
  mobile_animation_type: string | null;
  watermark: string | null;
  accessibility_enabled: boolean;
  auto_links_enabled: boolean;
  magic_link_message: string | null;
  magic_link_error_message: string | null;
  /**
   * What a download offers while `downloadable` is on (bulk settings' `downloadable_pdf`).
   * Absent means `full`; kept out of the defaults so books that never set it keep their revision.
   */
  download_mode?: DownloadMode;
  /**
   * Reader defaults (issue 16): reading direction, one page or two side by side, and the slideshow's
   * seconds per view (null: off). Absent means `ltr`, `auto`, null; kept out of the defaults, like
   * download_mode, so books that never set them keep their revision.
   */
  reading_direction?: ReadingDirection;
  page_layout?: PageLayout;
  autoplay_interval?: number | null;
  /** Derived from the access list and kept here by the access area (access-lists.service.ts); never set by a settings write. */
  eod_enabled?: boolean;
  /** Derived from the embed-domain list, like eod_enabled. */
  domains_enabled?: boolean;
}

export type DownloadMode = 'full' | 'single' | 'spread';
export type ReadingDirection = 'ltr' | 'rtl';
export type PageLayout = 'auto' | 'single' | 'double';

/** One upload: a file, its conversion job and the book it produces. */
export const uploadBatches = pgTable('upload_batches', {
  id: text('id').primaryKey(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  /** queued | processing | completed | failed | cancelled */
  status: text('status').notNull(),
  totalPages: integer('total_pages').notNull().default(0),
  completedPages: integer('completed_pages').notNull().default(0),
  failedPages: integer('failed_pages').notNull().default(0),
  error: text('error'),
  errorCode: text('error_code'),
  /** Problems that did not fail the batch: what the conversion could not reproduce, a product image drawn as a placeholder (see StoredWarning); at most 100. */
  warnings: jsonb('warnings').$type<StoredWarning[]>().notNull().default([]),
  originalFilename: text('original_filename'),
  sourceFormat: text('source_format'),
  sourceBytes: integer('source_bytes'),
  createdAt: instant('created_at').notNull().defaultNow(),
  updatedAt: instant('updated_at').notNull().defaultNow(),
  finishedAt: instant('finished_at'),
  /**
   * When every page of the book could be served (docs/conversion.md, "Readable before the last page is drawn"):
   * set once the document is read and the first pages drawn; the rest are drawn after it. Null before, and for a new version.
   */
  readableAt: instant('readable_at'),
}, (t) => [index('upload_batches_workspace_status_idx').on(t.workspaceId, t.status, t.createdAt)]);

export const books = pgTable('books', {
  /** Internal key: never published or accepted in v1 (random_id is). */
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  randomId: text('random_id').notNull(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  batchId: text('batch_id'),
  externalCatalogId: integer('external_catalog_id'),
  name: text('name').notNull(),
  slug: text('slug'),
  description: text('description'),
  /** draft | publish | schedule; the effective value also depends on published_date and expires_at. */
  status: text('status'),
  pageImagesStatus: text('page_images_status').notNull(),
  pageCount: integer('page_count').notNull().default(0),
  settings: jsonb('settings').$type<StoredBookSettings>().notNull(),
  /** Kept to protect downloads; never returned by the API (has_pdf_password tells). */
  pdfPassword: text('pdf_password'),
  /** Password to open an encrypted upload, used by conversion only. */
  sourcePassword: text('source_password'),
  /** Storage key prefix of the current rendition: new on every conversion, so asset URLs never change meaning. */
  renditionId: text('rendition_id'),
  sourceKey: text('source_key'),
  sourceFormat: text('source_format'),
  /** The PDF the pages were rendered from (for office uploads, LibreOffice's output). */
  pdfKey: text('pdf_key'),
  outline: jsonb('outline').$type<OutlineEntry[]>(),
  coverWidthPt: real('cover_width_pt'),
  coverHeightPt: real('cover_height_pt'),
  publishedDate: instant('published_date'),
  expiresAt: instant('expires_at'),
  /** When expiry unpublished the book (null while it has not). */
  unpublishedAt: instant('unpublished_at'),
  billingExpiresAt: instant('billing_expires_at'),
  settingsRevision: text('settings_revision').notNull().default(''),
  /** The number of the version the book shows (book_versions); its pages are book_pages, its assets the fields above. */
  currentVersion: integer('current_version').notNull().default(1),
  createdAt: instant('created_at').notNull().defaultNow(),
  updatedAt: instant('updated_at').notNull().defaultNow(),
}, (t) => [
  uniqueIndex('books_random_id_key').on(t.randomId),
  index('books_workspace_created_idx').on(t.workspaceId, t.createdAt, t.id),
  index('books_workspace_updated_idx').on(t.workspaceId, t.updatedAt, t.id),
  index('books_batch_idx').on(t.batchId),
]);

export interface StoredPageImage {
  width: number;
  height: number;
  key: string;
  /** 0 until an on-demand rendition has been made. */
  bytes: number;
  /**
   * Made on first request (books/page-renditions.service.ts), not by the
   * conversion: `width` for a listed width left out of it (2048 px), `zoom` for
   * the reader's zoom renditions (not listed in the API), `page` for a conversion width
   * of a page the conversion has not drawn yet (book_pages.drawn false).
   */
  onDemand?: 'width' | 'zoom' | 'page';
}

export const bookPages = pgTable('book_pages', {
  bookId: integer('book_id').notNull().references(() => books.id, { onDelete: 'cascade' }),
  number: integer('number').notNull(),
  widthPt: real('width_pt').notNull(),
  heightPt: real('height_pt').notNull(),
  images: jsonb('images').$type<StoredPageImage[]>().notNull(),
  text: jsonb('text').$type<TextItem[]>().notNull(),
  links: jsonb('links').$type<PageLink[]>().notNull(),
  error: text('error'),
  warnings: jsonb('warnings').$type<ConversionWarning[]>().notNull().default([]),
  /** Plain text of the page, for search. */
  plainText: text('plain_text').notNull().default(''),
  /** The conversion's images are stored (false: listed `onDemand: 'page'`, drawn by the background phase or on first request). */
  drawn: boolean('drawn').notNull().default(true),
  /**
   * Who draws the page now (`run:<lease token>` for the conversion, `api:<id>` for a request): taken by a
   * conditional update, so one drawer stores a page's images, never two (docs/conversion.md).
   */
  drawClaim: text('draw_claim'),
  drawClaimedAt: instant('draw_claimed_at'),
}, (t) => [primaryKey({ columns: [t.bookId, t.number] })]);

/** Who uploaded a version, as the versions list shows it (never a secret: a key's display prefix, a person's e-mail). */
export interface VersionAuthor {
  type: 'api_key' | 'person' | 'oauth' | 'system';
  name: string | null;
}

/**
 * One document a book has shown or will show (docs/book-versions.md). The
 * current version's pages are book_pages and its assets are the book row's;
 * every other version keeps its pages in book_version_pages and its files
 * under its own rendition prefix, so a conversion never touches what readers
 * are reading and a restore is a copy in one transaction.
 */
export const bookVersions = pgTable('book_versions', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  bookId: integer('book_id').notNull().references(() => books.id, { onDelete: 'cascade' }),
  /** 1 for the first upload, then one more per POST /books/{book}/versions, in the order the uploads were received. */
  number: integer('number').notNull(),
  batchId: text('batch_id'),
  /** converting | ready | failed | cancelled | expired (its files removed by BOOK_VERSIONS_KEPT) */
  status: text('status').notNull(),
  createdBy: jsonb('created_by').$type<VersionAuthor>(),
  sourceFilename: text('source_filename'),
  sourceKey: text('source_key'),
  sourceFormat: text('source_format'),
  sourcePassword: text('source_password'),
  pdfKey: text('pdf_key'),
  renditionId: text('rendition_id'),
  pageCount: integer('page_count').notNull().default(0),
  outline: jsonb('outline').$type<OutlineEntry[]>(),
  coverWidthPt: real('cover_width_pt'),
  coverHeightPt: real('cover_height_pt'),
  createdAt: instant('created_at').notNull().defaultNow(),
  /** When it last became current (null: never). */
  publishedAt: instant('published_at'),
  /** When BOOK_VERSIONS_KEPT removed its files. */
  expiredAt: instant('expired_at'),
}, (t) => [
  uniqueIndex('book_versions_book_number_key').on(t.bookId, t.number),
  index('book_versions_batch_idx').on(t.batchId),
]);

/** The pages of every version but the current one (whose pages are book_pages). */
export const bookVersionPages = pgTable('book_version_pages', {
  versionId: integer('version_id').notNull().references(() => bookVersions.id, { onDelete: 'cascade' }),
  number: integer('number').notNull(),
  widthPt: real('width_pt').notNull(),
  heightPt: real('height_pt').notNull(),
  images: jsonb('images').$type<StoredPageImage[]>().notNull(),
  text: jsonb('text').$type<TextItem[]>().notNull(),
  links: jsonb('links').$type<PageLink[]>().notNull(),
  error: text('error'),
  warnings: jsonb('warnings').$type<ConversionWarning[]>().notNull().default([]),
  plainText: text('plain_text').notNull().default(''),
}, (t) => [primaryKey({ columns: [t.versionId, t.number] })]);

export type BookRow = typeof books.$inferSelect;
export type VersionRow = typeof bookVersions.$inferSelect;
export type BatchRow = typeof uploadBatches.$inferSelect;
export type PageRow = typeof bookPages.$inferSelect;

/**
 * Each page's fingerprint in each version (docs/book-versions.md, "Pages
 * across versions"), taken when a version's conversion is done: a hash of
 * its normalised text and an 8×8 average hash of its smallest image, and the
 * page of the version it replaced that it matches (null: a new or changed page).
 */
export const bookPageFingerprints = pgTable('book_page_fingerprints', {
  bookId: integer('book_id').notNull().references(() => books.id, { onDelete: 'cascade' }),
  version: integer('version').notNull(),
  pageNumber: integer('page_number').notNull(),
  /** SHA-256 (first 16 hex digits) of the text, lower case, letters and digits only, single-spaced; '' for a page without text. */
  textHash: text('text_hash').notNull(),
  /** 64-bit average hash (16 hex digits) of the 320 px rendition in grey, 8×8; '' when the image could not be read. */
  imageHash: text('image_hash').notNull(),
  /** The version it was matched against (the one current when it was taken) and the page there it matches. */
  matchVersion: integer('match_version'),
  matchPage: integer('match_page'),
}, (t) => [primaryKey({ columns: [t.bookId, t.version, t.pageNumber] })]);
