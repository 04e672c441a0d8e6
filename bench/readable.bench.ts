/**
 * Time to a readable book: `npm run bench:readable [-- options]`.
 *
 * Through the real service and worker (in one process, PGlite in memory, local
 * storage), per document: from the end of the upload (the 202) to
 *   - first page: page 1's images stored;
 *   - readable: the book `page_images_status: ready` (batch stage `rendering`);
 *   - fully drawn: the batch `completed` (every page drawn): the all-at-once
 *     time, the reference in the same run;
 * and the time to draw one undrawn page on request (GET of its 1024 px image
 * right after the book is readable: what a reader jumping ahead waits).
 *
 * Documents: the fixtures' GeoTopo (117 pages of real text, 509 links), and
 * generated text PDFs of 300 and 1,000 pages (40 lines of text a page); the
 * 1,000-page figures are also shown scaled to 300 pages.
 *
 * Options: --pages 300,1000   generated documents (default 300,1000)
 *          --no-geotopo       skip GeoTopo
 *          --runs N           runs per document, medians printed (default 1)
 */
import { readFile } from 'node:fs/promises';
import { availableParallelism, loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { and, eq } from 'drizzle-orm';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { bookPages, books, uploadBatches } from '../src/modules/books/books.tables.ts';
import { startService, uploadFile } from '../test/helpers.ts';

const { values: args } = parseArgs({
  options: {
    pages: { type: 'string', default: '300,1000' },
    'no-geotopo': { type: 'boolean', default: false },
    runs: { type: 'string', default: '1' },
  },
});
const GEOTOPO = path.resolve(import.meta.dirname, '../../shared/fixtures/documents/GeoTopo-komprimiert.pdf');

async function textPdf(pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.TimesRoman);
  for (let n = 1; n <= pages; n++) {
    const page = doc.addPage([595, 842]);
    page.drawText(`Chapter ${Math.ceil(n / 10)}, page ${n}`, { x: 72, y: 780, size: 18, font });
    for (let line = 0; line < 40; line++) {
      page.drawText(`Line ${line + 1} of page ${n}: the quick brown fox jumps over the lazy dog, again and again, ${n * 40 + line}.`, { x: 72, y: 740 - line * 16, size: 10, font });
    }
  }
  return Buffer.from(await doc.save());
}

interface Figures { firstPage: number; readable: number; drawn: number; onDemand: number | null; pages: number }

const svc = await startService({ env: { RENDITIONS_PER_MINUTE: 100_000 } });
const key = (await svc.workspace()).key;
const db = svc.runtime.database.db;

async function measure(name: string, file: Buffer): Promise<Figures> {
  const res = await uploadFile(svc, key, file, name, { status: 'publish' });
  const uploaded = performance.now();
  if (res.status !== 202) throw new Error(res.text);
  const batchId = res.body.data.batch_id as string;
  const [book] = await db.select({ id: books.id, randomId: books.randomId }).from(books).where(eq(books.batchId, batchId));
  let firstPage = 0;
  let readable = 0;
  let onDemand: number | null = null;
  for (;;) {
    const [batch] = await db.select().from(uploadBatches).where(eq(uploadBatches.id, batchId));
    const now = performance.now() - uploaded;
    if (!firstPage) {
      const [page] = await db.select({ drawn: bookPages.drawn }).from(bookPages).where(and(eq(bookPages.bookId, book!.id), eq(bookPages.number, 1)));
      if (page?.drawn) firstPage = now;
    }
    if (!readable && batch!.readableAt) {
      readable = now;
      // A reader jumping to the last undrawn page right away.
      const undrawn = await db.select({ images: bookPages.images }).from(bookPages).where(and(eq(bookPages.bookId, book!.id), eq(bookPages.drawn, false))).orderBy(bookPages.number);
      const image = undrawn.at(-1)?.images.find((i) => i.onDemand === 'page' && i.width === 1024);
      if (image) {
        const started = performance.now();
        const answer = await fetch(`${svc.url}/assets/${image.key}`);
        await answer.arrayBuffer();
        if (answer.ok) onDemand = performance.now() - started;
      }
    }
    if (batch!.status === 'completed') return { firstPage: firstPage || now, readable: readable || now, drawn: now, onDemand, pages: batch!.totalPages };
    if (batch!.status === 'failed' || batch!.status === 'cancelled') throw new Error(`${name}: ${batch!.status} ${batch!.error}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const documents: { name: string; file: Buffer }[] = [];
if (!args['no-geotopo']) documents.push({ name: 'GeoTopo-komprimiert.pdf', file: await readFile(GEOTOPO) });
for (const pages of args.pages.split(',').map(Number).filter((n) => n > 0)) documents.push({ name: `text-${pages}.pdf`, file: await textPdf(pages) });

console.log(`bench:readable, ${availableParallelism()} cores, load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
console.log('document                      pages  first page   readable   fully drawn (ref)  readable/drawn  one undrawn page on request');
for (const doc of documents) {
  const runs: Figures[] = [];
  for (let i = 0; i < Number(args.runs); i++) runs.push(await measure(doc.name, doc.file));
  const f = {
    pages: runs[0]!.pages,
    firstPage: median(runs.map((r) => r.firstPage)),
    readable: median(runs.map((r) => r.readable)),
    drawn: median(runs.map((r) => r.drawn)),
    onDemand: runs.some((r) => r.onDemand !== null) ? median(runs.flatMap((r) => (r.onDemand === null ? [] : [r.onDemand]))) : null,
  };
  const scaled = f.pages > 300 ? `  (scaled to 300 pages: readable ${s((f.readable * 300) / f.pages)})` : '';
  console.log(`${doc.name.padEnd(29)} ${String(f.pages).padStart(5)}  ${s(f.firstPage).padStart(10)} ${s(f.readable).padStart(10)} ${s(f.drawn).padStart(18)}  ${(f.readable / f.drawn).toFixed(2).padStart(14)}  ${f.onDemand === null ? '—' : `${Math.round(f.onDemand)} ms`}${scaled}`);
}
console.log(`load after: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
await svc.stop();
process.exit(0);
