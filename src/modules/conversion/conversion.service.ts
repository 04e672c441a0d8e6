/**
 * The conversion engine's entry point: an uploaded file → page images, text,
 * links, outline, streamed page by page. Pure domain code: no HTTP, no
 * database; the books job calls it and stores what it hands over.
 *
 *   PDF            → rendered by pdf.js in worker threads (pdf-render.ts)
 *   Office formats → LibreOffice → PDF → as above
 *   JPEG / PNG     → one page (image-pages.ts)
 *
 * Contract with the caller:
 * - onStart runs once, before the first page, with the page count, outline and
 *   title, so progress can be shown.
 * - onPage runs once per page, one call at a time, in page order (page 1
 *   first). Rendering waits while onPage is busy (a few pages ahead at most),
 *   so a slow upload never lets finished pages pile up. A conversion that
 *   fails or is aborted settles only after the onPage call in progress has
 *   ended, so what the caller cleans up then is not written again behind it.
 * - Page images are files under `<workDir>/pages/`; the caller owns workDir
 *   (creates it, removes it after the job, whatever the outcome).
 * - A page that cannot be rendered is still delivered, blank, with `error`
 *   set; its number is listed in `failedPages`. The conversion fails only when
 *   no page at all could be rendered.
 * - Every expected failure is a ConversionError with a stable `code` and a
 *   message written for the uploader. The AbortSignal stops rendering workers
 *   and LibreOffice at once and rejects with code 'aborted'.
 */
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { ConversionError, abortedError } from './conversion.errors.ts';
import type { ConversionWarning, DocumentInfo, ImageFormat, RenderedPage } from './conversion.types.ts';
import { fontWarning } from './office-fonts.ts';
import { sniffDocument, type DocumentFormat } from './document-type.ts';
import { renderImagePage, DEFAULT_MAX_IMAGE_PIXELS } from './image-pages.ts';
import { checkOfficeArchive, type ArchiveLimits } from './office-archive.ts';
import { DEFAULT_OFFICE_MEMORY_LIMIT_MB, DEFAULT_OFFICE_TIMEOUT_MS, officeToPdf } from './office-to-pdf.ts';
import { DEFAULT_EFFORT, DEFAULT_MAX_PAGE_PIXELS, DEFAULT_QUALITY, normaliseWidths } from './page-images.ts';
import { DEFAULT_PAGE_TIMEOUT_MS, renderPdf } from './pdf-render.ts';
import { detectTextLinks, withoutOverlaps } from './text-links.ts';

export type { ConversionErrorCode } from './conversion.errors.ts';
export { ConversionError, isConversionError } from './conversion.errors.ts';
export type * from './conversion.types.ts';
export { ACCEPTED_FORMATS, ACCEPTED_FORMATS_TEXT, detectDocumentType, type DetectedType, type DocumentFormat, type DocumentKind } from './document-type.ts';
export { detectTextLinks } from './text-links.ts';
export { DEFAULT_WIDTHS, DEFAULT_ON_DEMAND_WIDTHS, DEFAULT_ZOOM_WIDTHS, ZOOM_MAX_PAGE_PIXELS, DEFAULT_MAX_PAGE_PIXELS, DEFAULT_QUALITY, DEFAULT_EFFORT, renditionSize, outputSize } from './page-images.ts';
export { encodeImageRendition } from './image-pages.ts';
export { renderPdfPage } from './pdf-render.ts';
export { drawPageOnRequest } from './page-on-request.ts';
export { MAX_EMBEDDED_IMAGE_PIXELS };
export { OFFICE_PACKAGES, findSoffice } from './office-to-pdf.ts';
export { DEFAULT_ARCHIVE_LIMITS, type ArchiveLimits } from './office-archive.ts';
/** Shared renderer processes; `renderWorkerPool.configure({ maxWorkers, idleTimeoutMs })` to size it. */
export { backgroundRenderWorkerPool, renderWorkerPool } from './render-worker-pool.ts';
import { backgroundRenderWorkerPool } from './render-worker-pool.ts';

/** Office formats that are zip archives (OOXML and ODF), checked for zip bombs before LibreOffice opens them. */
const ZIP_FORMATS = new Set<DocumentFormat>(['docx', 'xlsx', 'pptx', 'odt', 'ods', 'odp']);
export const DEFAULT_MAX_PAGES = 2000;

/** Largest image inside a PDF that pdf.js will decode: 2^26 px (e.g. 8192 x 8192), 256 MB as RGBA. */
const MAX_EMBEDDED_IMAGE_PIXELS = 2 ** 26;

export interface ConvertInput {
  filePath: string;
  /** For encrypted PDFs. */
  password?: string;
  /** Detect web and e-mail addresses in the text and add them as links. */
  autoLinks: boolean;
  /** Output widths in px, each image index-aligned with this list. Default [320, 1024, 2048]. */
  widths?: number[];
  /**
   * Widths of `widths` a PDF's pages are not rendered at now (made on request
   * later, see books/page-renditions.service.ts); their images are missing
   * from the pages. Uploaded images (cheap to resize) get every width. Default none.
   */
  deferWidths?: readonly number[];
  signal?: AbortSignal;
  /** Scratch directory owned by the caller; page images go to `<workDir>/pages/`. */
  workDir: string;
  /** Render threads for this document, at most the shared pool's size (default: the number of cores). */
  concurrency?: number;
  /** Draw with the background phase's renderers (lower priority, backgroundRenderWorkerPool). */
  background?: boolean;
  /** Default 'webp'. 'jpeg' encodes ~2x faster into ~30 % larger files. */
  format?: ImageFormat;
  /** 1-100, default 80. */
  quality?: number;
  /** WebP encoder effort 0-6, default 0 (see page-images.ts for the measurements). */
  effort?: number;
  /** Per page, default 60 s; a page over it is delivered blank with `error`. */
  pageTimeoutMs?: number;
  /** LibreOffice conversion, default 120 s. */
  officeTimeoutMs?: number;
  /** Pixel budget of a page's largest rendition (absurd page sizes are scaled down to fit). */
  maxPagePixels?: number;
  /** Uploaded images above this many pixels are refused before decoding. Default 100 MP. */
  maxImagePixels?: number;
  /** LibreOffice binary; default: found on PATH. */
  sofficePath?: string;
  /** Address-space limit of the LibreOffice process in MB (prlimit --as); 0 for none. Default 2048. */
  officeMemoryLimitMb?: number;
  /** Zip-bomb caps for OOXML and ODF documents (office-archive.ts). */
  archiveLimits?: ArchiveLimits;
  /** A document with more pages fails at once with code 'too_many_pages'. Default 2000. */
  maxPages?: number;
  onStart?: (info: ConversionStart) => void | Promise<void>;
}

export interface ConversionStart extends DocumentInfo {
  sourceFormat: DocumentFormat;
}

export interface ConversionResult extends DocumentInfo {
  /** Document-level warnings (fonts the server lacks); page warnings come with each page. */
  warnings: ConversionWarning[];
  /** The PDF LibreOffice made from an office document (in workDir), else null. */
  pdfPath: string | null;
  sourceFormat: DocumentFormat;
  /** Pages delivered blank because they could not be rendered. */
  failedPages: number[];
}

export async function convertDocument(input: ConvertInput, onPage: (page: RenderedPage) => Promise<void>): Promise<ConversionResult> {
  const prepared = await prepareDocument(input);
  if (prepared.kind === 'image') {
    const page = await renderImagePage(input.filePath, { ...outputOf(input), outDir: prepared.outDir, maxImagePixels: input.maxImagePixels ?? DEFAULT_MAX_IMAGE_PIXELS });
    if (input.signal?.aborted) throw abortedError(input.signal);
    const info = { pageCount: 1, outline: [], title: null };
    await input.onStart?.({ ...info, sourceFormat: prepared.sourceFormat });
    await onPage(page);
    return { ...info, pdfPath: null, sourceFormat: prepared.sourceFormat, failedPages: [], warnings: [] };
  }
  const result = await renderPdfPages(input, prepared, {}, onPage);
  return { ...result, pdfPath: prepared.pdfPath, sourceFormat: prepared.sourceFormat, warnings: prepared.warnings };
}

/** An uploaded file checked and, for an office document, turned into a PDF: what its pages are rendered from. */
export interface PreparedDocument {
  kind: 'pdf' | 'office' | 'image';
  sourceFormat: DocumentFormat;
  /** The PDF to render (the upload, or LibreOffice's output); null for an image. */
  pdfFile: string | null;
  /** LibreOffice's PDF (in workDir), else null. */
  pdfPath: string | null;
  /** Document-level warnings (fonts the server lacks). */
  warnings: ConversionWarning[];
  /** Where page images go: `<workDir>/pages/`. */
  outDir: string;
}

/** Checks the file (type, emptiness, zip bombs) and runs LibreOffice for an office document. */
export async function prepareDocument(input: ConvertInput): Promise<PreparedDocument> {
  const { signal } = input;
  if (signal?.aborted) throw abortedError(signal);
  const size = await stat(input.filePath).then((s) => s.size);
  if (size === 0) throw new ConversionError('empty_file', 'The file is empty.');
  const sniffed = await sniffDocument(input.filePath);
  if (!sniffed.type) throw new ConversionError('unsupported_format', sniffed.reason);
  const { kind, format } = sniffed.type;
  const outDir = path.join(input.workDir, 'pages');
  await mkdir(outDir, { recursive: true });
  if (kind === 'image') return { kind, sourceFormat: format, pdfFile: null, pdfPath: null, warnings: [], outDir };
  const warnings: ConversionWarning[] = [];
  if (kind === 'pdf') return { kind, sourceFormat: format, pdfFile: input.filePath, pdfPath: null, warnings, outDir };
  if (ZIP_FORMATS.has(format)) await checkOfficeArchive(input.filePath, input.archiveLimits);
  const fonts = await fontWarning(input.filePath, format);
  if (fonts) warnings.push(fonts);
  const pdfPath = await officeToPdf(input.filePath, format, {
    workDir: input.workDir,
    timeoutMs: input.officeTimeoutMs ?? DEFAULT_OFFICE_TIMEOUT_MS,
    memoryLimitMb: input.officeMemoryLimitMb ?? DEFAULT_OFFICE_MEMORY_LIMIT_MB,
    ...(signal ? { signal } : {}),
    ...(input.sofficePath ? { sofficePath: input.sofficePath } : {}),
  });
  return { kind, sourceFormat: format, pdfFile: pdfPath, pdfPath, warnings, outDir };
}

function outputOf(input: ConvertInput) {
  return {
    widths: normaliseWidths(input.widths),
    format: input.format ?? 'webp',
    quality: input.quality ?? DEFAULT_QUALITY,
    effort: input.effort ?? DEFAULT_EFFORT,
  };
}

/**
 * Renders a prepared PDF's pages (page order, one onPage call at a time, as
 * convertDocument). `pages` picks which (default all); `pixelsOnly` delivers
 * the images without the text and links (known already: a readable book's
 * background phase, which saves pdf.js reading them again); `dataOnly` delivers
 * each page's size, text and links without images: what makes a book readable
 * before its images are drawn (a few ms a page instead of ~170).
 */
export async function renderPdfPages(
  input: ConvertInput,
  prepared: PreparedDocument,
  options: { pages?: (pageCount: number) => number[]; dataOnly?: boolean; pixelsOnly?: boolean },
  onPage: (page: RenderedPage) => Promise<void>,
): Promise<{ pageCount: number; outline: DocumentInfo['outline']; title: string | null; failedPages: number[] }> {
  const { signal } = input;
  if (!prepared.pdfFile) throw new Error('renderPdfPages needs a PDF');
  const output = outputOf(input);
  const deferred = new Set(input.deferWidths ?? []);
  const now = output.widths.filter((w) => !deferred.has(w));
  const result = await renderPdf({
    filePath: prepared.pdfFile,
    ...(input.password !== undefined && prepared.kind === 'pdf' ? { password: input.password } : {}),
    outDir: prepared.outDir,
    ...output,
    widths: options.dataOnly ? [] : now.length > 0 ? now : output.widths,
    ...(options.pixelsOnly ? { pixelsOnly: true } : {}),
    maxPagePixels: input.maxPagePixels ?? DEFAULT_MAX_PAGE_PIXELS,
    maxEmbeddedImagePixels: MAX_EMBEDDED_IMAGE_PIXELS,
    pageTimeoutMs: input.pageTimeoutMs ?? DEFAULT_PAGE_TIMEOUT_MS,
    maxPages: input.maxPages ?? DEFAULT_MAX_PAGES,
    ...(options.pages ? { pages: options.pages } : {}),
    ...(input.concurrency !== undefined ? { concurrency: input.concurrency } : {}),
    ...(input.background ? { pool: backgroundRenderWorkerPool } : {}),
    ...(signal ? { signal } : {}),
    onStart: (info) => input.onStart?.({ ...info, sourceFormat: prepared.sourceFormat }),
    onPage: (page) => {
      if (input.autoLinks && page.text.length > 0) {
        page.links = [...page.links, ...withoutOverlaps(detectTextLinks(page.text), page.links)];
      }
      return onPage(page);
    },
  });
  return { pageCount: result.pageCount, outline: result.outline, title: result.title, failedPages: result.failedPages };
}
