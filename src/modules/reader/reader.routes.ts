/**
 * The public reader, at the root of the site (not under /v1):
 *
 *   GET /read/:randomId            the reader page (HTML)
 *   GET /read/:randomId/search?q=&offset=  full-text search (JSON): every matching page, hits 100 at a time
 *   GET /read/:randomId/text       page text beyond what the page carries (JSON)
 *   GET /read/:randomId/text-layer?page=N  positioned text runs of a page, for the selectable text layer (JSON)
 *   GET /read/:randomId/download   the PDF, when the book is downloadable
 *   GET /reader-assets/:file       the reader's script and styles (content-hashed, immutable)
 *
 * Every request passes the book's availability (reader.service.ts) and then
 * the access policy (reader.access.ts), the hook for access gates and embed
 * domains.
 */
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../platform/config/env.ts';
import type { Db } from '../../platform/db/database.ts';
import { MAX_INTEGER } from '../../platform/db/columns.ts';
import { ERRORS } from '../../platform/errors.ts';
import type { ClientRateLimiter } from '../../platform/http/client-rate-limit.ts';
import type { Storage } from '../../platform/storage/storage.ts';
import { allowAllReaders, type ReaderAccessPolicy, type ReaderRequestKind } from './reader.access.ts';
import { brandCspSources, type CspSources } from '../brand/brand.reader.ts';
import { readerBundle } from './reader.bundle.ts';
import { ReaderGate, type GateResult } from './reader.gate.ts';
import { backgroundCss, renderNoticePage, renderReaderPage } from './reader.html.ts';
import { ReaderService, SEARCH_MAX_QUERY, TEXT_PAGES_PER_REQUEST, downloadPages, type ReaderBook, type ReaderContent } from './reader.service.ts';
import { prepareDownload, QpdfMissingError } from './pdf-download.ts';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { planAllows } from '../../platform/auth/plans.ts';
import { SETTING_FIELDS } from '../books/books.settings.ts';
import { UpdateBookBody } from '../books/books.schemas.ts';
import { BrandFields } from '../brand/brand.schemas.ts';
import { loadReaderBrand, SOCIAL_FIELDS, type ReaderBrand } from '../brand/brand.service.ts';

/** The settings a preview may show: the update body's setting fields, checked as PUT /v1/books/{book} checks them. */
const PreviewSettings = Type.Pick(UpdateBookBody, Object.keys(SETTING_FIELDS) as (keyof typeof SETTING_FIELDS)[]);

function parsePreviewSettings(raw: unknown): Partial<Record<keyof typeof SETTING_FIELDS, unknown>> {
  if (raw === undefined || raw === '') return {};
  let parsed: unknown;
  try {
    parsed = typeof raw === 'string' && raw.length <= 8192 ? JSON.parse(raw) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed) || !Value.Check(PreviewSettings, parsed)) {
    throw ERRORS.validation({ settings: ['settings must be a JSON object of book settings, in the field names and values PUT /v1/books/{book} accepts.'] });
  }
  return parsed as Partial<Record<keyof typeof SETTING_FIELDS, unknown>>;
}

/**
 * A logo chosen but not saved travels in the preview's address as a data: URL; the whole request line must stay
 * within Node's 16 KB of headers, so the application shrinks the image to the reader bar's size first.
 */
export const PREVIEW_LOGO_MAX_CHARS = 8192;

/**
 * A brand a preview may show: POST /v1/brand's fields, checked as that body is; `logo` omitted keeps the saved
 * logo, empty shows none, or a small data: URL of a PNG, JPEG, WebP or GIF shows a logo chosen but not saved.
 */
const PreviewBrand = Type.Object({
  ...BrandFields.properties,
  logo: Type.Optional(Type.String({ maxLength: PREVIEW_LOGO_MAX_CHARS, pattern: '^$|^data:image/(png|jpeg|webp|gif);base64,[A-Za-z0-9+/]+={0,2}$' })),
});
type PreviewBrandInput = Static<typeof PreviewBrand>;

function parsePreviewBrand(raw: unknown): PreviewBrandInput | null {
  if (raw === undefined || raw === '') return null;
  let parsed: unknown;
  try {
    parsed = typeof raw === 'string' && raw.length <= PREVIEW_LOGO_MAX_CHARS + 8192 ? JSON.parse(raw) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed) || !Value.Check(PreviewBrand, parsed)) {
    throw ERRORS.validation({ brand: [`brand must be a JSON object of POST /v1/brand's fields, checked as that body is; logo, if given, empty or a data: URL of a PNG, JPEG, WebP or GIF image of at most ${PREVIEW_LOGO_MAX_CHARS} characters.`] });
  }
  return parsed as PreviewBrandInput;
}

/** The brand as typed, over the saved one (its logo kept unless replaced or emptied). Never Google Analytics: a preview is not a reading. */
function previewedBrand(input: PreviewBrandInput, saved: ReaderBrand | null): ReaderBrand {
  const text = (value: string | undefined) => (value ? value : null);
  return {
    companyName: input.company_name,
    logo: input.logo === undefined ? saved?.logo ?? null : input.logo ? { url: input.logo, width: 0, height: 0 } : null,
    websiteUrl: text(input.website_url),
    googleAnalytics: null,
    colors: { primary: text(input.primary_color), secondary: text(input.secondary_color), tertiary: text(input.tertiary_color) },
    social: SOCIAL_FIELDS.flatMap((network) => (input[network] ? [{ network, url: input[network] }] : [])),
  };
}

export interface ReaderRoutesOptions {
  db: Db;
  storage: Storage;
  config: Readonly<Config>;
  /** How long after billing_expires_at a book still shows its pages. Default 7 days. */
  billingGraceMs?: number;
  /** Who may read what, from where. Default: everyone, embeddable anywhere. */
  access?: ReaderAccessPolicy;
  /** A gate shared with other public book endpoints (then `access` and the service options are the gate's). */
  gate?: ReaderGate;
  /** Per-client limits on search and text (they read the database on every call). None: unlimited. */
  limiter?: ClientRateLimiter;
  /** Characters of page text the page itself carries. Default 200,000. */
  textBudgetChars?: number;
  /** The qpdf binary, for password-protected downloads. Default "qpdf" on PATH. */
  qpdf?: string;
}

const ROUTE = { schema: { hide: true }, config: { public: true, unlimited: true } } as const;
/** A reader searching or paging through text by hand stays far below these; a scraper does not. */
const SEARCH_LIMIT = { bucket: 'reader:search', max: 60, windowMs: 60_000 };
const TEXT_LIMIT = { bucket: 'reader:text', max: 120, windowMs: 60_000 };
/** An open reader asks at most every 5 s (client/version.ts): 60 a minute leaves room for a few tabs behind one address. */
const VERSION_LIMIT = { bucket: 'reader:version', max: 60, windowMs: 60_000 };
/** One or two per page turn: a reader turning fast stays below it. */
const TEXT_LAYER_LIMIT = { bucket: 'reader:text-layer', max: 600, windowMs: 60_000 };
const compressGzip = promisify(gzip);
const compressBrotli = promisify(brotliCompress);

type Encoding = 'br' | 'gzip' | null;

function encodingFor(request: FastifyRequest): Encoding {
  const accepted = String(request.headers['accept-encoding'] ?? '');
  if (/\bbr\b/.test(accepted)) return 'br';
  if (/\bgzip\b/.test(accepted)) return 'gzip';
  return null;
}

function contentSecurityPolicy(input: { nonce: string; imageOrigins: string[]; frameAncestors: '*' | string[]; extra?: CspSources | null }): string {
  // `extra`: a brand's Google Analytics (brand.reader.ts), allowed only on the pages that load it.
  const { extra } = input;
  return [
    "default-src 'none'",
    extra ? `script-src 'self' 'nonce-${input.nonce}' ${extra.script.join(' ')}` : "script-src 'self'",
    `style-src 'self' 'nonce-${input.nonce}'`,
    `img-src 'self' data: ${[...input.imageOrigins, ...(extra?.img ?? [])].join(' ')}`.trim(),
    `connect-src 'self' ${(extra?.connect ?? []).join(' ')}`.trim(),
    `frame-ancestors ${input.frameAncestors === '*' ? '*' : input.frameAncestors.join(' ') || "'none'"}`,
    "base-uri 'none'",
    "form-action 'self'",
    "object-src 'none'",
  ].join('; ');
}

function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/**
 * A page number given in a query (decimal digits, 1 up to the integer column's
 * range), or null: a larger number, such as 1e308, would fail the query.
 */
function pageNumber(raw: unknown): number | null {
  if (typeof raw !== 'string' || !/^\d{1,10}$/.test(raw)) return null;
  const n = Number(raw);
  return n >= 1 && n <= MAX_INTEGER ? n : null;
}

export const readerRoutes: FastifyPluginAsync<ReaderRoutesOptions> = async (app, options) => {
  const service = options.gate?.service ?? new ReaderService({ db: options.db, storage: options.storage, config: options.config, billingGraceMs: options.billingGraceMs, textBudgetChars: options.textBudgetChars });
  const readerGate = options.gate ?? new ReaderGate(service, options.access ?? allowAllReaders);
  const assetOrigins = service.assetOrigins();

  async function sendHtml(request: FastifyRequest, reply: FastifyReply, status: number, html: string, csp: { nonce: string; imageOrigins?: string[]; frameAncestors: '*' | string[]; extra?: CspSources | null; cacheControl?: string }) {
    // Helmet's X-Frame-Options would forbid embedding; frame-ancestors says where the reader may be framed instead.
    reply.removeHeader('x-frame-options');
    reply
      .code(status)
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', contentSecurityPolicy({ nonce: csp.nonce, imageOrigins: csp.imageOrigins ?? [], frameAncestors: csp.frameAncestors, extra: csp.extra }))
      .header('cache-control', csp.cacheControl ?? 'private, no-cache')
      .header('vary', 'accept-encoding');
    const body = Buffer.from(html);
    const encoding = body.length > 1024 ? encodingFor(request) : null;
    if (!encoding) return reply.send(body);
    const compressed = encoding === 'br'
      ? await compressBrotli(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } })
      : await compressGzip(body, { level: 6 });
    return reply.header('content-encoding', encoding).send(compressed);
  }

  function notice(request: FastifyRequest, reply: FastifyReply, status: number, title: string, message: string, bookName?: string, frameAncestors: '*' | string[] = '*') {
    const nonce = randomBytes(16).toString('base64');
    return sendHtml(request, reply, status, renderNoticePage({ nonce, title, message, bookName }), { nonce, frameAncestors });
  }

  async function limit(request: FastifyRequest, rule: typeof SEARCH_LIMIT): Promise<void> {
    if (!options.limiter) return;
    const wait = await options.limiter.hit([{ ...rule, subject: options.limiter.clientKey(request.ip) }]);
    if (wait !== null) throw ERRORS.rateLimited(wait);
  }

  const gate = (request: FastifyRequest, kind: ReaderRequestKind) =>
    readerGate.check({ randomId: (request.params as { randomId: string }).randomId, headers: request.headers, query: (request.query ?? {}) as Record<string, unknown>, ip: request.ip }, kind);

  async function refuseHtml(request: FastifyRequest, reply: FastifyReply, refused: Extract<GateResult, { ok: false }>) {
    if (refused.html) {
      const nonce = randomBytes(16).toString('base64');
      return sendHtml(request, reply, refused.status, refused.html(nonce), { nonce, frameAncestors: refused.frameAncestors });
    }
    return notice(request, reply, refused.status, refused.title, refused.message, refused.bookName, refused.frameAncestors);
  }

  function refuseJson(refused: Extract<GateResult, { ok: false }>): never {
    if (refused.status === 404) throw ERRORS.notFound('Book');
    if (refused.status === 410) throw ERRORS.gone(refused.message);
    if (refused.status === 401) throw ERRORS.unauthenticated(refused.message);
    throw ERRORS.forbidden(refused.message);
  }

  /** The reader's page for a book and its content, with its own nonce and the CSP its background and brand need. */
  async function sendReader(request: FastifyRequest, reply: FastifyReply, book: ReaderBook, content: ReaderContent, frameAncestors: '*' | string[], cacheControl?: string) {
    const bundle = await readerBundle();
    const nonce = randomBytes(16).toString('base64');
    const background = backgroundCss(book.settings.background, book.settings.image_display);
    const html = renderReaderPage({
      book,
      content,
      nonce,
      scriptUrl: `/reader-assets/${bundle.js.name}`,
      styleUrl: `/reader-assets/${bundle.css.name}`,
      bookCss: background.css,
      downloadUrl: `/read/${book.row.randomId}/download`,
    });
    const imageOrigins = background.imageOrigin ? [...assetOrigins, background.imageOrigin] : assetOrigins;
    return sendHtml(request, reply, 200, html, { nonce, imageOrigins, frameAncestors, extra: brandCspSources(content.brand), cacheControl });
  }

  app.get('/read/:randomId', ROUTE, async (request, reply) => {
    const result = await gate(request, 'page');
    if (!result.ok) return refuseHtml(request, reply, result);
    const { book } = result;
    return sendReader(request, reply, book, await service.content(book), result.frameAncestors);
  });

  /**
   * The reader with settings not yet saved, for the application's live
   * preview (docs/publishing-screens.md): only for a person signed in to the
   * book's workspace (the session cookie; books:read), drafts included; framed
   * by this origin only, never indexed or cached; its reader sends no events
   * (ReaderData.preview: a preview is not a reading).
   * `settings` is JSON in PUT /v1/books/{book}'s field names, checked as that
   * body checks them; `brand` is JSON in POST /v1/brand's field names (plus a
   * small `logo` data: URL), shown as take-over would show it, whatever the
   * toggle and the plan: /app/brand's preview.
   */
  app.get('/read/:randomId/preview', { schema: { hide: true }, config: { scope: 'books:read' } }, async (request, reply) => {
    const { randomId } = request.params as { randomId: string };
    const book = await service.find(randomId);
    if (!book || book.row.workspaceId !== request.auth!.workspaceId) return notice(request, reply, 404, 'Not found', 'There is no such book in this workspace.', undefined, ["'self'"]);
    const query = request.query as { settings?: unknown; brand?: unknown };
    const override = parsePreviewSettings(query.settings);
    const brand = parsePreviewBrand(query.brand);
    const settings = { ...book.settings };
    for (const [field, setting] of Object.entries(SETTING_FIELDS)) {
      const value = override[field as keyof typeof SETTING_FIELDS];
      if (value !== undefined) (settings as Record<string, unknown>)[setting] = value;
    }
    if (!planAllows(book.plan, 'remove_made_with_badge')) settings.made_with_badge_enabled = true;
    const previewed = { ...book, settings };
    const [read, saved] = await Promise.all([
      service.content(previewed),
      brand ? loadReaderBrand(options.db, book.row.workspaceId, (key) => service.assetUrl(key), { evenWithoutTakeOver: true }) : null,
    ]);
    reply.header('x-robots-tag', 'noindex');
    const content = { ...read, data: { ...read.data, preview: true as const }, ...(brand ? { brand: previewedBrand(brand, saved) } : {}) };
    return sendReader(request, reply, previewed, content, ["'self'"], 'no-store');
  });

  app.get('/read/:randomId/search', ROUTE, async (request, reply) => {
    await limit(request, SEARCH_LIMIT);
    const result = await gate(request, 'search');
    if (!result.ok) refuseJson(result);
    const q = (request.query as { q?: unknown }).q;
    if (typeof q !== 'string' || !q.trim()) throw ERRORS.validation({ q: ['The q field is required.'] });
    if (q.length > SEARCH_MAX_QUERY * 2) throw ERRORS.validation({ q: [`The q field must be at most ${SEARCH_MAX_QUERY} characters.`] });
    const offset = Number((request.query as { offset?: string }).offset ?? 0);
    if (!Number.isInteger(offset) || offset < 0) throw ERRORS.validation({ offset: ['offset must be a whole number, 0 or more.'] });
    reply.header('cache-control', 'private, max-age=60').header('x-robots-tag', 'noindex');
    return service.search(result.book, q, offset);
  });

  app.get('/read/:randomId/text', ROUTE, async (request, reply) => {
    await limit(request, TEXT_LIMIT);
    const result = await gate(request, 'text');
    if (!result.ok) refuseJson(result);
    const query = request.query as { from?: unknown; to?: unknown };
    const from = query.from === undefined ? 1 : pageNumber(query.from);
    const to = query.to === undefined && from !== null ? from + TEXT_PAGES_PER_REQUEST - 1 : pageNumber(query.to);
    if (from === null || to === null || to < from) {
      throw ERRORS.validation({ from: ['from and to must be page numbers with from <= to.'] });
    }
    reply.header('cache-control', 'private, max-age=60').header('x-robots-tag', 'noindex');
    return service.text(result.book, from, to, versionParam(request.query));
  });

  /** The current version and its page count: an open reader reopens on a new version (client/version.ts, docs/book-versions.md). */
  app.get('/read/:randomId/version', ROUTE, async (request, reply) => {
    await limit(request, VERSION_LIMIT);
    const result = await gate(request, 'text');
    if (!result.ok) refuseJson(result);
    reply.header('cache-control', 'no-store').header('x-robots-tag', 'noindex');
    return { version: result.book.row.currentVersion, page_count: result.book.row.pageCount };
  });

  app.get('/read/:randomId/text-layer', ROUTE, async (request, reply) => {
    await limit(request, TEXT_LAYER_LIMIT);
    const result = await gate(request, 'text');
    if (!result.ok) refuseJson(result);
    const page = pageNumber((request.query as { page?: unknown }).page);
    if (page === null) throw ERRORS.validation({ page: ['page must be a page number.'] });
    const layer = await service.textLayer(result.book, page, versionParam(request.query));
    if (!layer) throw ERRORS.notFound('Page');
    reply.header('cache-control', 'private, max-age=300').header('x-robots-tag', 'noindex');
    return layer;
  });

  /**
   * The PDF, as the book's download mode says: the whole document, or the page
   * (`single`) or spread (`spread`) the reader shows, given as `?page=`
   * (default 1); protected by the download password when one is set.
   */
  app.get('/read/:randomId/download', ROUTE, async (request, reply) => {
    const result = await gate(request, 'download');
    if (!result.ok) return refuseHtml(request, reply, result);
    const { book } = result;
    const asked = (request.query as { page?: string }).page;
    const pages = downloadPages(book, asked === undefined ? 1 : /^\d{1,6}$/.test(asked) ? Number(asked) : Number.NaN);
    if (pages === 'no_such_page') return notice(request, reply, 400, 'No such page', `This flipbook has pages 1 to ${book.row.pageCount}.`, book.row.name);
    const pdf = await service.openPdf(book);
    if (!pdf) return notice(request, reply, 404, 'Download not available', 'This flipbook cannot be downloaded.', book.row.name);
    let { body, size, filename } = pdf;
    if (pages) filename = filename.replace(/\.pdf$/, pages[0] === pages[1] ? ` - page ${pages[0]}.pdf` : ` - pages ${pages[0]}-${pages[1]}.pdf`);
    if (book.row.pdfPassword || pages) {
      try {
        ({ body, size } = await prepareDownload(pdf.body, { password: book.row.pdfPassword, sourcePassword: book.row.sourcePassword, pages, qpdf: options.qpdf }));
      } catch (error) {
        pdf.body.destroy();
        if (error instanceof QpdfMissingError) {
          request.log.error({ err: error }, 'page-range and password-protected downloads need qpdf');
          return notice(request, reply, 503, 'Download unavailable', 'The download cannot be prepared right now. Please try again later.', book.row.name);
        }
        throw error;
      }
    }
    reply
      .header('content-type', 'application/pdf')
      .header('content-disposition', contentDisposition(filename))
      .header('cache-control', 'private, no-store')
      .header('x-robots-tag', 'noindex');
    if (size !== null) reply.header('content-length', String(size));
    return reply.send(body);
  });

  app.get('/reader-assets/:file', ROUTE, async (request, reply) => {
    const bundle = await readerBundle();
    const file = bundle.files.get((request.params as { file: string }).file);
    if (!file) throw ERRORS.notFound('Asset');
    const encoding = encodingFor(request);
    const body = encoding === 'br' ? file.br : encoding === 'gzip' ? file.gzip : file.raw;
    if (encoding) reply.header('content-encoding', encoding);
    return reply
      .header('content-type', file.contentType)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('vary', 'accept-encoding')
      .header('cross-origin-resource-policy', 'same-origin')
      .send(body);
  });
};

/** `v`: the version the reader shows (its data's `ver`), when it sends one; anything else is ignored (the current version). */
function versionParam(query: unknown): number | undefined {
  const v = Number((query as { v?: unknown }).v);
  return Number.isInteger(v) && v >= 1 && v <= 2_147_483_647 ? v : undefined;
}
