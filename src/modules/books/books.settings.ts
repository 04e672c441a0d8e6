/**
 * Book settings: their defaults, how the update body's field names map onto
 * them, the revision digest, and the Book record of spec part 2.
 */
import { createHash } from 'node:crypto';
import { planAllows } from '../../platform/auth/plans.ts';
import type { BookRow, DownloadMode, PageLayout, ReadingDirection, StoredBookSettings } from './books.tables.ts';

export const ANIMATIONS = ['flip', 'scroll_view', 'slide', 'fade', 'zoom', 'flick-through', 'cut'] as const;
export const READING_DIRECTIONS = ['ltr', 'rtl'] as const;
export const PAGE_LAYOUTS = ['auto', 'single', 'double'] as const;
/** Seconds per view of the reader's slideshow (autoplay_interval). */
export const AUTOPLAY_MIN = 2;
export const AUTOPLAY_MAX = 120;

export const DEFAULT_SETTINGS: StoredBookSettings = {
  background: null,
  downloadable: false,
  made_with_badge_enabled: true,
  fullscreen_enabled: true,
  open_fullscreen_by_default: false,
  sound_enabled: false,
  copyright_enabled: false,
  share_social_media: true,
  privacy: null,
  image_display: null,
  animation_type: 'flip',
  mobile_animation_type: null,
  watermark: null,
  accessibility_enabled: true,
  auto_links_enabled: true,
  magic_link_message: null,
  magic_link_error_message: null,
};

/** Update-body fields (spec part 4) → stored setting. */
export const SETTING_FIELDS = {
  background: 'background',
  watermark: 'watermark',
  pdf_privacy_status: 'privacy',
  magic_link_message: 'magic_link_message',
  magic_link_error_message: 'magic_link_error_message',
  animation_type: 'animation_type',
  mobile_animation_type: 'mobile_animation_type',
  image_display: 'image_display',
  accessibility_enabled: 'accessibility_enabled',
  allow_fullscreen: 'fullscreen_enabled',
  auto_links_enabled: 'auto_links_enabled',
  copyright_enabled: 'copyright_enabled',
  downloadable_pdf: 'downloadable',
  flip_sound: 'sound_enabled',
  made_with_badge_enabled: 'made_with_badge_enabled',
  open_fullscreen_by_default: 'open_fullscreen_by_default',
  share_social_media: 'share_social_media',
  reading_direction: 'reading_direction',
  page_layout: 'page_layout',
  autoplay_interval: 'autoplay_interval',
} as const satisfies Record<string, keyof StoredBookSettings>;

/**
 * A change to a book's settings group (settings, title, description, download
 * password), in the API's field names: the update body's SETTING_FIELDS keys
 * plus the book fields. Shared by PUT /books/{book} and bulk settings, so both
 * paths write the same way. `undefined` leaves a field unchanged.
 */
export interface SettingsChange {
  settings: Partial<Record<keyof typeof SETTING_FIELDS, unknown>>;
  /** Bulk settings' `downloadable_pdf` mode; `downloadable` is set through `settings.downloadable_pdf`. */
  downloadMode?: DownloadMode | null;
  title?: string;
  description?: string | null;
  /** An empty string or null removes the password. */
  pdfPassword?: string | null;
}

export type SettingsGroup = Pick<BookRow, 'settings' | 'name' | 'description' | 'pdfPassword'>;

/** The book's settings group after `change`, and its new revision. Pure: the caller writes it (under a row lock). */
export function applySettingsChange(current: SettingsGroup, change: SettingsChange): SettingsGroup & { settingsRevision: string } {
  const settings: StoredBookSettings = { ...DEFAULT_SETTINGS, ...current.settings };
  for (const [field, setting] of Object.entries(SETTING_FIELDS)) {
    const value = change.settings[field as keyof typeof SETTING_FIELDS];
    if (value !== undefined) (settings as unknown as Record<string, unknown>)[setting] = value;
  }
  if (change.downloadMode !== undefined) {
    if (change.downloadMode === null) delete settings.download_mode;
    else settings.download_mode = change.downloadMode;
  }
  // The mode only means something while downloads are on.
  if (!settings.downloadable) delete settings.download_mode;
  const next: SettingsGroup = {
    settings,
    name: change.title ?? current.name,
    description: change.description !== undefined ? change.description : current.description,
    pdfPassword: change.pdfPassword !== undefined ? change.pdfPassword || null : current.pdfPassword,
  };
  return { ...next, settingsRevision: settingsRevision(next) };
}

/** The reader defaults a book shows (absent: left to right, spreads when wide, no slideshow). */
export function readerDefaults(settings: StoredBookSettings): { reading_direction: ReadingDirection; page_layout: PageLayout; autoplay_interval: number | null } {
  return {
    reading_direction: settings.reading_direction ?? 'ltr',
    page_layout: settings.page_layout ?? 'auto',
    autoplay_interval: settings.autoplay_interval ?? null,
  };
}

/** Bulk settings' `downloadable_pdf`: false, or what a download offers. */
export function downloadablePdfOf(settings: StoredBookSettings): false | DownloadMode {
  return settings.downloadable ? (settings.download_mode ?? 'full') : false;
}

/**
 * A digest of everything a settings write can change (settings, title,
 * description, password): bulk writes compare it to refuse stale edits.
 */
export function settingsRevision(book: Pick<BookRow, 'settings' | 'name' | 'description' | 'pdfPassword'>): string {
  const canonical = JSON.stringify({
    settings: Object.fromEntries(Object.entries({ ...DEFAULT_SETTINGS, ...book.settings }).sort(([a], [b]) => (a < b ? -1 : 1))),
    title: book.name,
    description: book.description,
    pdf_password: book.pdfPassword ? createHash('sha256').update(book.pdfPassword).digest('hex') : null,
  });
  return createHash('sha256').update(canonical).digest('hex');
}

/** The status a reader sees right now: expiry and scheduled publication take effect at their instant. */
export function effectiveStatus(book: Pick<BookRow, 'status' | 'expiresAt' | 'publishedDate'>, now = new Date()): string | null {
  if (book.expiresAt && book.expiresAt <= now && book.status !== 'draft') return 'draft';
  if (book.status === 'schedule' && book.publishedDate && book.publishedDate <= now) return 'publish';
  return book.status;
}

export interface BookUrls {
  previewUrl(randomId: string): string;
  assetUrl(key: string): string;
}

export interface AccessListState {
  eodEnabled: boolean;
  domainsEnabled: boolean;
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * A responsive, lazy, titled iframe. Its height follows the reader: the frame
 * posts the height it needs for its width (toolbars plus the page or spread,
 * client/embed.ts) and the snippet's few lines of script apply it, from that
 * frame only. Without script the box keeps a spread's aspect ratio plus the
 * toolbars, and never less than a single page at the screen's width (a phone
 * column), so the page stays readable either way.
 */
export function embedCode(book: Pick<BookRow, 'name' | 'coverWidthPt' | 'coverHeightPt'>, previewUrl: string): string {
  const pageRatio = book.coverWidthPt && book.coverHeightPt ? book.coverWidthPt / book.coverHeightPt : 0.7071;
  const ratio = (pageRatio * 2).toFixed(4);
  const single = (1 / pageRatio).toFixed(4);
  return (
    `<div style="position:relative;width:100%;aspect-ratio:${ratio};min-height:min(92vh,calc(100vw * ${single} + 100px));max-height:100vh">` +
    `<iframe src="${escapeAttribute(previewUrl)}" title="${escapeAttribute(book.name)}" loading="lazy" allow="fullscreen" allowfullscreen ` +
    `style="position:absolute;inset:0;width:100%;height:100%;border:0"></iframe></div>` +
    `<script>(function(b){var f=b.firstChild;addEventListener("message",function(e){var d=e.data;` +
    `if(e.source===f.contentWindow&&d&&d.type==="flipbook:resize"&&d.height>0){b.style.aspectRatio="auto";b.style.minHeight="0";b.style.height=Math.min(d.height,innerHeight)+"px"}})})(document.currentScript.previousElementSibling)</script>`
  );
}

/** The revision stored with the row (rows written before revisions were kept get theirs computed). */
export function currentRevision(book: SettingsGroup & { settingsRevision: string }): string {
  return book.settingsRevision || settingsRevision(book);
}

export function toBookRecord(book: BookRow, context: { plan: string; urls: BookUrls; access: AccessListState; coverKey: string | null; now?: Date }) {
  const settings = { ...DEFAULT_SETTINGS, ...book.settings };
  const previewUrl = context.urls.previewUrl(book.randomId);
  const canRemoveBadge = planAllows(context.plan, 'remove_made_with_badge');
  return {
    random_id: book.randomId,
    batch_id: book.batchId,
    external_catalog_id: book.externalCatalogId,
    name: book.name,
    description: book.description,
    status: effectiveStatus(book, context.now),
    page_images_status: book.pageImagesStatus,
    page_count: book.pageCount,
    preview_url: previewUrl,
    thumbnail_url: context.coverKey ? context.urls.assetUrl(context.coverKey) : null,
    embed_code: embedCode(book, previewUrl),
    published_date: book.publishedDate?.toISOString() ?? null,
    expires_at: book.expiresAt?.toISOString() ?? null,
    billing_expires_at: book.billingExpiresAt?.toISOString() ?? null,
    created_at: book.createdAt.toISOString(),
    updated_at: book.updatedAt.toISOString(),
    settings: {
      ...settings,
      ...readerDefaults(settings),
      // Effective value: plans that cannot remove the badge always show it.
      made_with_badge_enabled: canRemoveBadge ? settings.made_with_badge_enabled : true,
      eod_enabled: context.access.eodEnabled,
      domains_enabled: context.access.domainsEnabled,
      has_pdf_password: book.pdfPassword !== null,
    },
    settings_revision: currentRevision(book),
  };
}

export type BookRecord = ReturnType<typeof toBookRecord>;
