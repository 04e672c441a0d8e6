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
