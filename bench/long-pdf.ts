/**
 * A text-heavy generated PDF for the scaling check of convert.bench.ts: each
 * page a title, 40 lines of prose and a few shapes.
 *
 *   node bench/long-pdf.ts PAGES OUT.pdf
 *
 * Run as its own process by the bench, so that pdf-lib's document (hundreds
 * of MB of objects for 2,000 pages, garbage the bench's heap keeps in its RSS
 * long after) is not counted as conversion memory.
 */
import { writeFile } from 'node:fs/promises';
import { PDFDocument, StandardFonts, rgb } from 'pdf-lib';

export async function makeLongPdf(pages: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.TimesRoman);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const words = 'the flipbook engine renders each page once at its largest width and draws smaller ones from it'.split(' ');
  for (let n = 1; n <= pages; n++) {
    const page = doc.addPage([595, 842]);
    page.drawText(`Chapter ${Math.ceil(n / 10)}, page ${n}`, { x: 60, y: 780, size: 22, font: bold });
    for (let line = 0; line < 40; line++) {
      const text = Array.from({ length: 12 }, (_, i) => words[(n * 7 + line * 3 + i) % words.length]).join(' ');
      page.drawText(text, { x: 60, y: 740 - line * 16, size: 11, font });
    }
    page.drawRectangle({ x: 60, y: 60, width: 475, height: 20, color: rgb((n % 7) / 7, 0.4, 0.6) });
    page.drawCircle({ x: 500, y: 790, size: 18, color: rgb(0.9, 0.5, (n % 5) / 5) });
  }
  return doc.save();
}

if (import.meta.main) {
  const [pages, out] = process.argv.slice(2);
  if (!pages || !out || !(Number(pages) >= 1)) {
    console.error('usage: node bench/long-pdf.ts PAGES OUT.pdf');
    process.exit(2);
  }
  await writeFile(out, await makeLongPdf(Number(pages)));
}
