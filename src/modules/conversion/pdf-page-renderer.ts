/**
 * The body of a render worker thread (started by pdf-render.worker.ts, leased
 * from render-worker-pool.ts). It opens one document at a time with pdf.js,
 * which in Node parses in the calling thread, so each worker is one core's
 * worth of parsing and rasterising; then renders the pages it is sent.
 *
 * Per page: render once at the largest width into a reusable canvas, draw the
 * smaller widths from it, and let sharp encode every size on libvips threads
 * straight from the canvas memory. While sharp encodes page N the worker
 * already renders page N+1 into a second set of canvases: two sets per worker
 * and no more, so memory is flat whatever the page count.
 *
 * Measured per A4 text page (CPU ms, one core): render 30-65 + Skia flush
 * 20-45, text 16-23, downscale 13, WebP encode of the three widths 180-210.
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
import type * as NapiCanvas from '@napi-rs/canvas';
import type { Canvas } from '@napi-rs/canvas';
import { getDocument, type PageViewport, type PDFDocumentProxy, type PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { RenderParameters } from 'pdfjs-dist/types/src/display/api.js';
import sharp from 'sharp';
import { ConversionError } from './conversion.errors.ts';
import type { ConversionWarning, PageLink, RenderedPage, TextItem } from './conversion.types.ts';
import { MAX_SIDE, encodeRaw, encodeSized, encodeWidths, fitRenderSize, outputSize, renditionSize, type RawRendition } from './page-images.ts';
import { damagedImageMessage, mutoolAvailable, MutoolDrawer } from './mupdf-drawer.ts';
import { POPPLER_PACKAGE, decryptWithQpdf, renderPageWithPoppler } from './poppler-fallback.ts';
import { annotationText } from './annotation-text.ts';
import { DestinationResolver, extractLinks, extractOutline, extractTitle, hasRightToLeft, normaliseTextContent, rightToLeftClusters } from './pdf-page-data.ts';
import type { FromRenderWorker, RenderWorkerInit, ToRenderWorker } from './pdf-render.protocol.ts';
import { openError, pdfjsDocumentOptions } from './pdfjs-options.ts';

/** The pool's channel: the IPC channel of this child process (render-worker-pool.ts), or a worker thread's port. */
const port = parentPort ?? (process.send ? { on: (event: 'message', listener: (message: ToRenderWorker) => void) => process.on(event, listener), postMessage: (message: FromRenderWorker) => { process.send!(message); } } : null);
if (!port) throw new Error('pdf-page-renderer.ts must run in a render worker process (pdf-render.worker.ts)');
const send = (message: FromRenderWorker) => port.postMessage(message);
// The pool ends this process when it is not needed; if the service itself goes away, so does this renderer.
process.on('disconnect', () => process.exit(0));

/**
 * pdf.js tells what it left out of a page only through its warnings
 * (console.warn "Warning: …", at verbosity 1): an image over the decoding
 * limit is "removed", an undecodable one skipped. In this thread they are
 * collected for the page being drawn (renders run one at a time) and never
 * printed; the page then carries a warning or is drawn another way.
 */
let pageWarnings: string[] | null = null;
const printWarning = console.warn.bind(console);
console.warn = (...args: unknown[]) => {
  const first = args[0];
  if (typeof first === 'string' && first.startsWith('Warning: ')) {
    if (pageWarnings && pageWarnings.length < 100) pageWarnings.push(first.slice('Warning: '.length));
    return;
  }
  printWarning(...args);
};
/**
 * No libvips operation cache: every page is a new input, so nothing in it is
 * ever reused, yet by default it keeps up to 50 MB and 100 operations alive
 * in each renderer. (What grew with the page count was glibc's malloc
 * arenas, see render-worker-pool.ts; the figures there are with this cache off.)
 */
sharp.cache(false);
const IMAGE_TOO_LARGE = /Image exceeded maximum allowed size/;
const IMAGE_UNDECODABLE = /Unable to decode (inline )?image/;
/**
 * An embedded TrueType font without a cmap table: pdf.js then finds a
 * symbolic font's glyphs by no other way and draws nothing for its text
 * (a whole table column of an annual report), where poppler and MuPDF find
 * them by their names. pdf.js says it once per font, on the first page that
 * uses it, and not which font it is.
 */
const FONT_WITHOUT_CMAP = /No cmap table available/;

/**
 * The canvas module pdf.js itself loads (pdfjs-dist may ship its own copy of
 * @napi-rs/canvas): its Path2D and ours must be the same class, or every fill
 * with a path fails with "not a valid enum value of type CanvasFillRule".
 */
const requireFromPdfjs = createRequire(createRequire(import.meta.url).resolve('pdfjs-dist/legacy/build/pdf.mjs'));
const { createCanvas } = requireFromPdfjs('@napi-rs/canvas') as typeof NapiCanvas;

/** The canvases of one page: the render at the largest width, and one per smaller output size. */
interface Frame {
  canvases: Map<string, Canvas>;
}

function canvasOf(frame: Frame, width: number, height: number): Canvas {
  const key = `${width}x${height}`;
  let canvas = frame.canvases.get(key);
  if (!canvas) {
    // A document of many page sizes would otherwise accumulate canvases.
    if (frame.canvases.size >= 8) frame.canvases.clear();
    canvas = createCanvas(width, height);
    frame.canvases.set(key, canvas);
  }
  return canvas;
}

/**
 * Two frames: one being rendered into, one being read by sharp. New ones for
 * each document, so nothing a previous document drew can outlive it (see the
 * flush after render below for the crash this guards against).
 */
class FramePool {
  readonly #free: Frame[] = [{ canvases: new Map() }, { canvases: new Map() }];
  readonly #waiting: ((frame: Frame) => void)[] = [];

  async acquire(): Promise<Frame> {
    return this.#free.pop() ?? new Promise<Frame>((resolve) => this.#waiting.push(resolve));
  }

  release(frame: Frame): void {
    const next = this.#waiting.shift();
    if (next) next(frame);
    else this.#free.push(frame);
  }
}

/** The page is rendered this many times wider than its largest output, then scaled down (the quality of the old 2048→1024 px path). */
const SUPERSAMPLE = 2;

/** One open document and the work in hand for it. */
class OpenDocument {
  readonly init: RenderWorkerInit;
  readonly doc: PDFDocumentProxy;
  readonly resolver: DestinationResolver;
  readonly maxWidth: number;
  /** Renders run one at a time (they share this thread anyway); encodes overlap them. */
  queue: Promise<void> = Promise.resolve();
  readonly encodes = new Set<Promise<void>>();
  readonly frames = new FramePool();
  /** A font without a cmap table was met: this and every later page of the document is drawn by poppler. */
  fontWithoutCmap = false;
  /** Draws the pages when mutool is installed (mupdf-drawer.ts); pdf.js then only reads text and links, and draws what mutool cannot. */
  readonly drawer: MutoolDrawer | null;
  /** A decrypted copy for mutool, removed on close. */
  readonly decryptedCopy: string | null;

  constructor(init: RenderWorkerInit, doc: PDFDocumentProxy, drawer: MutoolDrawer | null, decryptedCopy: string | null) {
    this.init = init;
    this.doc = doc;
    this.drawer = drawer;
    this.decryptedCopy = decryptedCopy;
    this.resolver = new DestinationResolver(doc);
    // Supersampled up to 2048 px: drawn directly at 1024 px, scanned images lost detail
    // (SSIM of a 200 dpi scan against pdftoppm 0.970 → 0.954); the widths are drawn from
    // this canvas. Larger renditions (drawn on request) are drawn at their own size, as before.
    const widest = Math.max(1, ...init.widths);
    this.maxWidth = widest * SUPERSAMPLE <= 2048 ? Math.round(widest * SUPERSAMPLE) : widest;
  }
}

let current: OpenDocument | null = null;

/**
 * pdf.js invents one blank page when the page tree is unusable (issue15590.pdf:
 * /Pages points to a JavaScript action). Such a page has no object reference.
 */
async function checkHasPages(doc: PDFDocumentProxy): Promise<void> {
  if (doc.numPages < 1) throw new ConversionError('no_pages', 'This PDF contains no pages.');
  if (doc.numPages === 1) {
    const page = await doc.getPage(1).catch(() => null);
    if (!page || page.ref === null) throw new ConversionError('no_pages', 'This PDF contains no pages (its page tree is missing or damaged).');
  }
}

async function open(init: RenderWorkerInit): Promise<void> {
  let doc: PDFDocumentProxy | null = null;
  try {
    const data = new Uint8Array(await readFile(init.filePath));
    doc = await getDocument(pdfjsDocumentOptions(data, init.password, init.maxEmbeddedImagePixels)).promise;
    await checkHasPages(doc);
  } catch (error) {
    await doc?.destroy().catch(() => undefined);
    const e = error instanceof ConversionError ? error : openError(error, init.password !== undefined);
    send({ type: 'open-failed', code: e.code, message: e.message });
    return;
  }
  const opened = new OpenDocument(init, doc, ...(await mutoolFor(init)));
  current = opened;
  const info = init.wantDocumentInfo ? { outline: await extractOutline(doc, opened.resolver), title: await extractTitle(doc) } : null;
  send({ type: 'opened', pageCount: doc.numPages, info, runs: opened.drawer !== null });
}

/**
 * mutool for this document, when installed, for the conversion's widths. Not
 * for renditions drawn on demand (pdfjsOnly): one page per process gains
 * little there, and pdf.js with poppler is the renderer the 2048 px and zoom
 * images were checked against (MuPDF fits images to the pixel grid, a pixel
 * off poppler's edges, which the lost-ink check of a huge fax page counts).
 * An encrypted document is drawn from a copy
 * qpdf decrypted into the job's directory (mutool takes a password only on
 * its command line). Drawn at the largest width itself: MuPDF's anti-aliasing
 * and image scaling need no supersampling (the SSIM table in docs/benchmarks.md).
 */
async function mutoolFor(init: RenderWorkerInit): Promise<[MutoolDrawer | null, string | null]> {
  // No widths (the page's data only, nothing drawn): no mutool process at all.
  if (init.pdfjsOnly || init.widths.length === 0 || !(await mutoolAvailable())) return [null, null];
  let source = init.filePath;
  let decrypted: string | null = null;
  if (init.password !== undefined) {
    decrypted = path.join(init.outDir, `mupdf-${process.pid}-${++opens}-decrypted.pdf`);
    if (!(await decryptWithQpdf(init.filePath, init.password, decrypted))) return [null, null];
    source = decrypted;
  }
  const width = Math.max(...init.widths);
  // Within the pixel budget whatever the page's shape; a page whose budget makes it narrower than `width` is drawn by pdf.js (sizes differ).
  const maxHeight = Math.max(1, Math.floor(Math.min(MAX_SIDE, init.maxPagePixels / width)));
  return [new MutoolDrawer({ source, dir: init.outDir, width, maxHeight }), decrypted];
}
let opens = 0;

async function close(): Promise<void> {
  const closing = current;
  current = null;
  if (closing) {
    await closing.queue;
    await Promise.all(closing.encodes);
    await closing.drawer?.close();
    if (closing.decryptedCopy) await rm(closing.decryptedCopy, { force: true });
    await closing.doc.destroy().catch(() => undefined);
  }
  send({ type: 'closed' });
}

// Messages are handled strictly in order: a render never overtakes its open, a close waits for both.
let inbox: Promise<void> = Promise.resolve();
port.on('message', (message: ToRenderWorker) => {
  inbox = inbox.then(async () => {
    if (message.type === 'open') await open(message.init);
    else if (message.type === 'close') await close();
    else if (message.type === 'render' && current) {
      const target = current;
      target.queue = target.queue.then(async () => {
        if (!target.drawer || !(await drawPage(target, message.page, message.next ?? []))) await renderPage(target, message.page);
      });
    }
  });
});

async function renderPage(open: OpenDocument, number: number): Promise<void> {
  const { doc, init, frames } = open;
  let widthPt: number | null = null;
  let heightPt: number | null = null;
  let frame: Frame | null = null;
  try {
    const page = await doc.getPage(number);
    const base = page.getViewport({ scale: 1 });
    widthPt = base.width;
    heightPt = base.height;
    if (init.widths.length === 0) {
      // No widths: the page's data only (size, text, links), for a book readable before its images are drawn.
      const [text, links] = await pageData(open, page, base);
      page.cleanup();
      send({ type: 'page', page: { number, widthPt: round2(base.width), heightPt: round2(base.height), images: [], text, links } });
      return;
    }
    const size = fitRenderSize(widthPt, heightPt, open.maxWidth, init.maxPagePixels);
    const viewport = page.getViewport({ scale: size.scale });
    frame = await frames.acquire();
    const canvas = canvasOf(frame, size.width, size.height);
    const context = canvas.getContext('2d');
    context.setTransform(1, 0, 0, 1, 0, 0);
    const seen: string[] = [];
    pageWarnings = seen;
    try {
      await page.render({
        canvas: null,
        // @napi-rs/canvas implements the 2D context pdf.js draws with; only the DOM typings differ.
        canvasContext: context as unknown as RenderParameters['canvasContext'],
        viewport,
        // The canvas is whole pixels; stretch the page to fill it exactly.
        transform: [size.width / viewport.width, 0, 0, size.height / viewport.height, 0, 0],
      }).promise;
    } finally {
      pageWarnings = null;
    }
    // Skia defers drawing until the pixels are read, and the deferred draws can
    // point at image memory pdf.js frees on page.cleanup()/destroy(): read now,
    // while it is alive. Without this, converting two LibreOffice spreadsheets in
    // a row segfaulted (see the regression test in office-to-pdf.test.ts).
    canvas.data();
    const [text, links] = init.pixelsOnly ? [[], []] : await pageData(open, page, base);
    page.cleanup();

    const warnings: ConversionWarning[] = [];
    if (seen.some((w) => IMAGE_UNDECODABLE.test(w))) {
      warnings.push({ code: 'image_damaged', message: `An image on page ${number} is damaged and could not be drawn; the rest of the page is shown. Check the image in the original document and upload it again.` });
    }
    const imageTooLarge = seen.some((w) => IMAGE_TOO_LARGE.test(w));
    if (seen.some((w) => FONT_WITHOUT_CMAP.test(w))) open.fontWithoutCmap = true;
    if (imageTooLarge || open.fontWithoutCmap) {
      // pdf.js left an image or a font's text out; poppler scales images while decoding them and finds glyphs by name.
      const png = await renderPageWithPoppler({ filePath: init.filePath, page: number, width: size.width, height: size.height, outDir: init.outDir, ...(init.password !== undefined ? { password: init.password } : {}) });
      if (png) {
        frames.release(frame);
        frame = null;
        const images = await encodeWidths(sharp(png).removeAlpha().toColourspace('srgb'), size, { ...init, baseName: pageBaseName(number) });
        const rendered: RenderedPage = { number, widthPt: round2(base.width), heightPt: round2(base.height), images, text, links };
        if (warnings.length > 0) rendered.warnings = warnings;
        send({ type: 'page', page: rendered });
        return;
      }
      // What pdf.js drew is the rest of the page.
      if (imageTooLarge) {
        warnings.push({
          code: 'image_too_large',
          message: `An image on page ${number} is too large to draw (over ${Math.round(init.maxEmbeddedImagePixels / 1_000_000)} megapixels) and was left out. ` +
            `Scale the image down in the original and upload it again, or ask the server's operator to install ${POPPLER_PACKAGE}, which can draw it.`,
        });
      }
      if (open.fontWithoutCmap) {
        // pdf.js names neither the font nor, after its first page, the pages using it: every later page may miss it.
        warnings.push({
          code: 'font_not_drawn',
          message: `Text on page ${number} may be missing from the page image: it uses an embedded font without a character map (cmap table), which cannot be drawn here. ` +
            `The text is still searchable. Embed the fonts in full when exporting the PDF, or ask the server's operator to install ${POPPLER_PACKAGE}, which can draw it.`,
        });
      }
    }

    // Each width's size as a direct render would give it (the supersampled canvas rounds differently).
    const targetSize = (w: number) => {
      const direct = renditionSize(base.width, base.height, w, init.maxPagePixels);
      return direct.width <= size.width && direct.height <= size.height ? direct : outputSize(size, w);
    };
    const renditions = downscale(frame, canvas, size, init.widths, targetSize);
    const heldFrame = frame;
    frame = null;
    // Not awaited: the next page renders while this one encodes.
    const encode = encodeRaw(renditions, { ...init, baseName: pageBaseName(number) })
      .then(
        (images) => {
          const rendered: RenderedPage = { number, widthPt: round2(base.width), heightPt: round2(base.height), images, text, links };
          if (warnings.length > 0) rendered.warnings = warnings;
          send({ type: 'page', page: rendered });
        },
        (error: unknown) => send({ type: 'page-failed', page: number, message: describe(error), widthPt, heightPt }),
      )
      .finally(() => {
        frames.release(heldFrame);
        open.encodes.delete(encode);
      });
    open.encodes.add(encode);
  } catch (error) {
    if (frame) frames.release(frame);
    send({ type: 'page-failed', page: number, message: describe(error), widthPt, heightPt });
  }
}

/**
 * A page drawn by mutool, its text and links read by pdf.js meanwhile. False
 * when mutool could not draw it, or drew it at another size than the
 * renderer's (the pixel budget shrank it): renderPage then draws it as before.
 */
async function drawPage(open: OpenDocument, number: number, next: number[]): Promise<boolean> {
  const { doc, init } = open;
  const page = await doc.getPage(number).catch(() => null);
  if (!page) return false;
  const base = page.getViewport({ scale: 1 });
  const size = fitRenderSize(base.width, base.height, Math.max(...init.widths), init.maxPagePixels);
  let data: [TextItem[], PageLink[]];
  let drawn: Awaited<ReturnType<MutoolDrawer['draw']>>;
  try {
    [drawn, data] = await Promise.all([open.drawer!.draw(number, next), init.pixelsOnly ? ([[], []] as [TextItem[], PageLink[]]) : pageData(open, page, base)]);
  } catch {
    return false;
  } finally {
    page.cleanup();
  }
  // mutool rounds the page's box to pixels on its own: a pixel off is resized, more means another size.
  if (!drawn || Math.abs(drawn.width - size.width) > 2 || Math.abs(drawn.height - size.height) > 2) return false;
  const warnings: ConversionWarning[] = [];
  if (damagedImageMessage(drawn.messages)) {
    warnings.push({ code: 'image_damaged', message: `An image on page ${number} is damaged and could not be drawn; the rest of the page is shown. Check the image in the original document and upload it again.` });
  }
  const renditions = init.widths.map((requestedWidth) => {
    const direct = renditionSize(base.width, base.height, requestedWidth, init.maxPagePixels);
    return { requestedWidth, ...(direct.width <= size.width && direct.height <= size.height ? direct : outputSize(size, requestedWidth)) };
  });
  const input = sharp(drawn.data, { raw: { width: drawn.width, height: drawn.height, channels: drawn.channels } }).toColourspace('srgb');
  // Not awaited: mutool draws the next page and pdf.js reads its text while this one encodes.
  const encode = encodeSized(input, drawn, renditions, { ...init, baseName: pageBaseName(number) })
    .then(
      (images) => {
        const rendered: RenderedPage = { number, widthPt: round2(base.width), heightPt: round2(base.height), images, text: data[0], links: data[1] };
        if (warnings.length > 0) rendered.warnings = warnings;
        send({ type: 'page', page: rendered });
      },
      (error: unknown) => send({ type: 'page-failed', page: number, message: describe(error), widthPt: base.width, heightPt: base.height }),
    )
    .finally(() => open.encodes.delete(encode));
  open.encodes.add(encode);
  return true;
}

/**
 * Smaller widths are drawn from the next larger rendition with Skia's mipmapped
 * ("medium") smoothing: ~13 ms for 2048→1024→320, where sharp's RGBA resize
 * costs ~50 ms a width. Pixels are handed over without a copy (canvas.data()),
 * which is why a frame stays reserved until its encode has finished.
 */
function downscale(frame: Frame, rendered: Canvas, size: { width: number; height: number }, widths: number[], targetSize: (width: number) => { width: number; height: number }): RawRendition[] {
  const bySize = widths.map((requestedWidth) => ({ requestedWidth, ...targetSize(requestedWidth) })).sort((a, b) => b.width - a.width);
  let previous = rendered;
  const renditions: RawRendition[] = [];
  for (const target of bySize) {
    let canvas = rendered;
    if (target.width !== size.width || target.height !== size.height) {
      canvas = canvasOf(frame, target.width, target.height);
      if (canvas !== previous) {
        const context = canvas.getContext('2d');
        context.imageSmoothingEnabled = true;
        context.imageSmoothingQuality = 'medium';
        context.drawImage(previous, 0, 0, target.width, target.height);
      }
    }
    previous = canvas;
    renditions.push({ requestedWidth: target.requestedWidth, data: canvas.data(), width: target.width, height: target.height });
  }
  // Back to the caller's order: images are index-aligned with the widths option.
  return renditions.sort((a, b) => widths.indexOf(a.requestedWidth) - widths.indexOf(b.requestedWidth));
}

/** A page's text (content, then form fields and stamps) and links. */
async function pageData(open: OpenDocument, page: PDFPageProxy, base: PageViewport) {
  const { init, doc } = open;
  const annotations = page.getAnnotations({ intent: 'display' });
  const [contentText, fieldText, links] = await Promise.all([
    page.getTextContent().then(async (content) => normaliseTextContent(content, base, hasRightToLeft(content) ? await rightToLeftClusters(page) : [])),
    annotationText(page, base, init.filePath, init.password !== undefined, annotations),
    extractLinks(page, base, open.resolver, doc.numPages, annotations),
  ]);
  return [[...contentText, ...fieldText], links] as [TextItem[], PageLink[]];
}

const round2 = (value: number) => Math.round(value * 100) / 100;
const pageBaseName = (number: number) => `page-${String(number).padStart(5, '0')}`;



function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return `This page could not be rendered (${message.replace(/\.$/, '')}).`;
}
