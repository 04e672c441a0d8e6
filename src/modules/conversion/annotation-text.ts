/**
 * Text that a page shows through its annotations rather than its content
 * stream, made searchable like the rest of the page (poppler's pdftotext
 * extracts it too):
 *
 * - Filled form fields and free-text comments: pdf.js reads the text of their
 *   appearance (`textContent`); the run's box is the annotation's rectangle.
 * - Stamps: pdf.js does not read their appearance's text, so poppler's
 *   pdftotext reads the stamp's rectangle of the page (one short process per
 *   stamp with an appearance, at most MAX_STAMPS a page). Without pdftotext,
 *   or for an encrypted document (its password would be on a command line),
 *   stamps stay unsearchable, as before.
 *
 * Hidden annotations (flag bit 2) and those not printed nor viewed are left
 * out, as they are not drawn.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { PDFPageProxy, PageViewport } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { TextItem } from './conversion.types.ts';
import { stripControls } from './text-order.ts';

const run = promisify(execFile);
const MAX_STAMPS = 8;
const PDFTOTEXT_TIMEOUT_MS = 10_000;

interface PdfjsAnnotation {
  subtype?: string;
  rect?: number[];
  textContent?: string[];
  hidden?: boolean;
  noView?: boolean;
  hasAppearance?: boolean;
  annotationFlags?: number;
}

const round = (value: number) => Math.round(value * 100_000) / 100_000;

function boxOf(rect: number[], viewport: PageViewport): Omit<TextItem, 'text'> | null {
  const [x1, y1, x2, y2] = viewport.convertToViewportRectangle(rect) as number[];
  if (![x1, y1, x2, y2].every((v) => Number.isFinite(v))) return null;
  const clamp = (v: number) => Math.min(1, Math.max(0, v));
  const left = clamp(Math.min(x1!, x2!) / viewport.width);
  const right = clamp(Math.max(x1!, x2!) / viewport.width);
  const top = clamp(Math.min(y1!, y2!) / viewport.height);
  const bottom = clamp(Math.max(y1!, y2!) / viewport.height);
  if (right <= left || bottom <= top) return null;
  return { x: round(left), y: round(top), width: round(right - left), height: round(bottom - top) };
}

const clean = (text: string) => stripControls(text).replace(/\s+/g, ' ').trim();

/** The page's annotation text as runs, after its content's (`filePath`: the PDF, for pdftotext). */
export async function annotationText(page: PDFPageProxy, viewport: PageViewport, filePath: string, encrypted: boolean, annotations?: Promise<unknown[]>): Promise<TextItem[]> {
  const list = (await (annotations ?? page.getAnnotations({ intent: 'display' })).catch(() => [])) as PdfjsAnnotation[];
  const items: TextItem[] = [];
  let stamps = 0;
  for (const annotation of list) {
    if (annotation.hidden || annotation.noView || !Array.isArray(annotation.rect) || annotation.rect.length !== 4) continue;
    if ((annotation.annotationFlags ?? 0) & 2) continue;
    const box = boxOf(annotation.rect, viewport);
    if (!box) continue;
    if (Array.isArray(annotation.textContent) && annotation.textContent.length > 0) {
      const text = clean(annotation.textContent.join(' '));
      if (text) items.push({ text, ...box });
    } else if (annotation.subtype === 'Stamp' && annotation.hasAppearance !== false && !encrypted && stamps < MAX_STAMPS) {
      stamps++;
      const text = await stampText(filePath, page.pageNumber, box, viewport);
      if (text) items.push({ text, ...box });
    }
  }
  return items;
}

/** pdftotext of the stamp's rectangle on the displayed page (72 dpi: one pixel a point). */
async function stampText(filePath: string, pageNumber: number, box: Omit<TextItem, 'text'>, viewport: PageViewport): Promise<string> {
  const scale = viewport.scale || 1;
  const px = (fraction: number, size: number) => String(Math.round((fraction * size) / scale));
  try {
    const { stdout } = await run('pdftotext', [
      '-f', String(pageNumber), '-l', String(pageNumber), '-r', '72',
      '-x', px(box.x, viewport.width), '-y', px(box.y, viewport.height),
      '-W', px(box.width, viewport.width), '-H', px(box.height, viewport.height),
      '-enc', 'UTF-8', '-q', filePath, '-',
    ], { timeout: PDFTOTEXT_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: 256 * 1024 });
    return clean(stdout);
  } catch {
    return '';
  }
}
