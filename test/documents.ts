/**
 * Documents the tests make themselves (pdf-lib, sharp), and the shared
 * real-world corpus (../shared/fixtures/documents), which tests skip with a
 * message when it is absent.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { PDFDocument, PDFName, PDFString, StandardFonts, rgb } from 'pdf-lib';
import sharp from 'sharp';

export const CORPUS_DIR = path.resolve(import.meta.dirname, '../../shared/fixtures/documents');
export const corpusAvailable = existsSync(CORPUS_DIR);
export const CORPUS_SKIP = corpusAvailable ? false : `the shared corpus is absent (${CORPUS_DIR})`;

export function corpus(name: string): string {
  return path.join(CORPUS_DIR, name);
}

export interface PdfOptions {
  pages: number;
  /** Adds on page 1 a link annotation to https://example.com/annotated and one to the last page. */
  links?: boolean;
  /** Page size in points; default A4. */
  size?: [number, number];
}

/** A PDF whose page N says "Page N of M" and, on page 1, names a URL and an e-mail address in its text. */
export async function makePdf(options: PdfOptions): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const [width, height] = options.size ?? [595, 842];
  const pages = [];
  for (let n = 1; n <= options.pages; n++) {
    const page = doc.addPage([width, height]);
    page.drawText(`Page ${n} of ${options.pages}`, { x: 72, y: height - 100, size: 28, font, color: rgb(0.1, 0.1, 0.4) });
    page.drawText(`Flipbook test document, paragraph ${n}.`, { x: 72, y: height - 160, size: 14, font });
    if (n === 1) page.drawText('Visit www.flipbook-test.example or write to hello@flipbook-test.example', { x: 72, y: height - 220, size: 12, font });
    pages.push(page);
  }
  if (options.links) {
    const first = pages[0]!;
    const last = pages[pages.length - 1]!;
    const uri = doc.context.obj({
      Type: 'Annot', Subtype: 'Link', Rect: [72, 500, 272, 530], Border: [0, 0, 0],
      A: { Type: 'Action', S: 'URI', URI: PDFString.of('https://example.com/annotated') },
    });
    const internal = doc.context.obj({
      Type: 'Annot', Subtype: 'Link', Rect: [72, 400, 272, 430], Border: [0, 0, 0],
      Dest: [last.ref, PDFName.of('Fit')],
    });
    first.node.set(PDFName.of('Annots'), doc.context.obj([doc.context.register(uri), doc.context.register(internal)]));
  }
  return Buffer.from(await doc.save());
}

export async function makePng(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 4, background: { r: 200, g: 30, b: 60, alpha: 1 } } }).png().toBuffer();
}

/**
 * A catalog-like PDF: every page a full-bleed photo-like picture (smooth colour blobs, so its renditions
 * weigh what a real catalog page does: about 10-25 KB at 320 px, 100-200 KB at 1024 px) under "Page N of M".
 * The picture is embedded once and drawn on every page, so a 400-page book is a small file that converts
 * like a long catalog.
 */
export async function makeCatalogPdf(pages: number): Promise<Buffer> {
  const [width, height] = [595, 842];
  // Random colours on a coarse grid, enlarged with a smooth kernel, then fine grain: a photo's detail.
  const grid = Buffer.alloc(24 * 34 * 3);
  let seed = 7;
  for (let i = 0; i < grid.length; i++) grid[i] = (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 256;
  const smooth = await sharp(grid, { raw: { width: 24, height: 34, channels: 3 } }).resize(1240, 1754, { kernel: 'cubic' }).raw().toBuffer();
  for (let i = 0; i < smooth.length; i++) smooth[i] = Math.max(0, Math.min(255, smooth[i]! + (((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 48) - 24)));
  const photo = await sharp(smooth, { raw: { width: 1240, height: 1754, channels: 3 } }).jpeg({ quality: 80 }).toBuffer();
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.HelveticaBold);
  const image = await doc.embedJpg(photo);
  for (let n = 1; n <= pages; n++) {
    const page = doc.addPage([width, height]);
    page.drawImage(image, { x: 0, y: 0, width, height });
    page.drawRectangle({ x: 40, y: height - 130, width: 360, height: 70, color: rgb(1, 1, 1) });
    page.drawText(`Page ${n} of ${pages}`, { x: 56, y: height - 108, size: 30, font, color: rgb(0.1, 0.1, 0.4) });
  }
  return Buffer.from(await doc.save());
}
