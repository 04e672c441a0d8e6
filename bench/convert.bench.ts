/**
 * Conversion engine benchmark: `npm run bench:convert [-- options]`.
 *
 * 1. Converts every PDF of ../shared/fixtures/documents with convertDocument
 *    and the default widths (320/1024/2048 WebP), one document after another
 *    (each using all cores), writing pages to a temp dir. Documents expected to
 *    fail (by the corpus manifest) and files that are not PDFs are converted
 *    outside the timed run and reported.
 * 2. Times pdftoppm -r 150 -png and mutool draw -r 150 over the same files,
 *    when installed, and prints our speed relative to theirs.
 * 3. Scaling check: peak memory converting a generated 1,000-page PDF vs a
 *    100-page one (the goal is flat).
 *
 * 4. Fidelity: per corpus document, the mean SSIM of our 1024 px image against
 *    a pdftoppm render of the same page scaled to the same size (ssim.js,
 *    default options), computed outside the timed run.
 *
 * Peak RSS is the kernel's VmHWM for this process, which includes the render
 * worker threads (same address space), reset between phases via
 * /proc/self/clear_refs.
 *
 * Options: --formats webp,jpeg   output formats to time (default webp,jpeg)
 *          --no-reference        skip pdftoppm / mutool
 *          --no-scaling          skip the 100 vs 1,000 page check
 *          --no-ssim             skip the SSIM against pdftoppm
 *          --ssim-only           only the SSIM of the corpus (no timing)
 *          --scaling-only        only the 100 vs 1,000 page check
 *          --all-widths-now      also render the 2048 px image during the conversion
 *                                (as before on-demand renditions), timed as a second run
 *
 * The default output is the service's: 320 and 1024 px during the conversion,
 * 2048 px drawn on its first request (DEFAULT_ON_DEMAND_WIDTHS).
 *          --concurrency N       render workers (default: cores)
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { PDFDocument, StandardFonts, rgb } from 'pdf-lib';
import sharp from 'sharp';
import { ssim } from 'ssim.js';
import { DEFAULT_ON_DEMAND_WIDTHS, convertDocument, detectDocumentType, type ImageFormat } from '../src/modules/conversion/conversion.service.ts';

const run = promisify(execFile);
const { values: args } = parseArgs({
  options: {
    formats: { type: 'string', default: 'webp,jpeg' },
    'no-reference': { type: 'boolean', default: false },
    'no-scaling': { type: 'boolean', default: false },
    'no-ssim': { type: 'boolean', default: false },
    'all-widths-now': { type: 'boolean', default: false },
    'ssim-only': { type: 'boolean', default: false },
    'scaling-only': { type: 'boolean', default: false },
    concurrency: { type: 'string' },
  },
});
const formats = args.formats.split(',').map((f) => f.trim()) as ImageFormat[];
const concurrency = args.concurrency ? Number(args.concurrency) : undefined;

const CORPUS = path.resolve(import.meta.dirname, '../../shared/fixtures/documents');
/** From the corpus MANIFEST.md. */
const PASSWORDS: Record<string, string> = { 'libreoffice-writer-password.pdf': 'openpassword', 'issue6010_1.pdf': 'abc' };
const EXPECTED_TO_FAIL = new Set(['bug1020226.pdf', 'issue15590.pdf']);

const fmt = (n: number, digits = 1) => n.toFixed(digits);
const mb = (kb: number) => `${fmt(kb / 1024, 0)} MB`;

function peakRssKb(): number {
  return Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);
}

function resetPeakRss(): void {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    // Not Linux or not allowed: peaks then include earlier phases.
  }
}

interface DocRun {
  name: string;
  pages: number;
  seconds: number;
  firstPageSeconds: number;
  failedPages: number[];
  ssim?: number;
}

/** Mean SSIM of our 1024 px images (files in `pages`) against pdftoppm renders of the same pages, scaled to the same size. */
async function meanSsim(file: string, pages: Map<number, string>): Promise<number> {
  const password = PASSWORDS[path.basename(file)];
  const out = await mkdtemp(path.join(tmpdir(), 'flipbook-bench-ssim-'));
  try {
    await run('pdftoppm', ['-scale-to-x', '1024', '-scale-to-y', '-1', '-png', ...(password ? ['-upw', password] : []), file, path.join(out, 'p')], { maxBuffer: 16 * 1024 * 1024 }).catch(() => undefined);
    const refs = (await readdir(out)).sort();
    const digits = refs[0] ? /-(\d+)\.png$/.exec(refs[0])![1]!.length : 1;
    let sum = 0;
    let count = 0;
    for (const [number, ours] of pages) {
      const ref = path.join(out, `p-${String(number).padStart(digits, '0')}.png`);
      if (!existsSync(ref)) continue;
      // A page one renderer cannot draw (a damaged page tree) has no pair to compare.
      const a = await sharp(ours).flatten({ background: '#ffffff' }).ensureAlpha().raw().toBuffer({ resolveWithObject: true }).catch(() => null);
      const b = a && await sharp(ref).flatten({ background: '#ffffff' }).resize(a.info.width, a.info.height, { fit: 'fill' }).ensureAlpha().raw().toBuffer().catch(() => null);
      if (!a || !b) continue;
      const image = (data: Buffer) => ({ data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), width: a.info.width, height: a.info.height });
      sum += ssim(image(a.data), image(b)).mssim;
      count++;
    }
    return count ? sum / count : Number.NaN;
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

async function convertOne(file: string, format: ImageFormat, measureSsim = false, allNow = false): Promise<DocRun> {
  const workDir = await mkdtemp(path.join(tmpdir(), 'flipbook-bench-'));
  const started = performance.now();
  let firstPage = 0;
  const ssimPages = new Map<number, string>();
  try {
    const password = PASSWORDS[path.basename(file)];
    const result = await convertDocument(
      { filePath: file, autoLinks: false, workDir, format, deferWidths: allNow ? [] : DEFAULT_ON_DEMAND_WIDTHS, ...(password ? { password } : {}), ...(concurrency ? { concurrency } : {}) },
      async (page) => {
        firstPage ||= performance.now();
        const at1024 = page.images.find((image) => image.requestedWidth === 1024);
        if (measureSsim && at1024) ssimPages.set(page.number, at1024.path);
      },
    );
    const seconds = (performance.now() - started) / 1000;
    return {
      ...(measureSsim ? { ssim: await meanSsim(file, ssimPages) } : {}),
      name: path.basename(file),
      pages: result.pageCount,
      seconds,
      firstPageSeconds: (firstPage - started) / 1000,
      failedPages: result.failedPages,
    };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

async function corpusPhase(): Promise<{ files: string[]; pages: number } | null> {
  if (!existsSync(CORPUS)) {
    console.log(`\nThe fixture corpus is absent (${CORPUS}): skipping the real-document run.`);
    return null;
  }
  const candidates = (await readdir(CORPUS)).filter((f) => f.toLowerCase().endsWith('.pdf')).sort();
  const timed: string[] = [];
  console.log('\n== Documents not in the timed run ==');
  for (const name of candidates) {
    const file = path.join(CORPUS, name);
    const type = await detectDocumentType(file);
    if (type?.kind !== 'pdf') {
      console.log(`  ${name}: not a PDF (detected ${type?.format ?? 'unknown'}), skipped`);
    } else if (EXPECTED_TO_FAIL.has(name)) {
      try {
        await convertOne(file, 'webp');
        console.log(`  ${name}: expected to fail, but converted`);
      } catch (error) {
        const e = error as { code?: string; message: string };
        console.log(`  ${name}: fails as expected: [${e.code}] ${e.message}`);
      }
    } else {
      timed.push(file);
    }
  }

  let pages = 0;
  if (args['ssim-only']) return { files: timed, pages };
  const variants = formats.flatMap((format) => [{ format, allNow: false }, ...(args['all-widths-now'] ? [{ format, allNow: true }] : [])]);
  for (const { format, allNow } of variants) {
    const label = allNow ? `${format}, 2048 px too` : format;
    console.log(`\n== Our engine: ${timed.length} PDFs, ${allNow ? '320/1024/2048 px during the conversion' : '320/1024 px (2048 px on request)'}, ${format}, ${concurrency ?? availableParallelism()} workers ==`);
    resetPeakRss();
    const runs: DocRun[] = [];
    const started = performance.now();
    for (const [index, file] of timed.entries()) {
      try {
        const r = await convertOne(file, format, false, allNow);
        runs.push(r);
        const failed = r.failedPages.length ? `, blank (failed) pages: ${r.failedPages.join(',')}` : '';
        console.log(
          `  [${index + 1}/${timed.length}] ${r.name.padEnd(32)} ${String(r.pages).padStart(4)} pp  ${fmt(r.seconds, 2).padStart(6)} s  ` +
            `${fmt(r.pages / r.seconds).padStart(5)} pages/s  first page ${fmt(r.firstPageSeconds, 2)} s${failed}`,
        );
      } catch (error) {
        console.log(`  [${index + 1}/${timed.length}] ${path.basename(file)}: UNEXPECTED FAILURE ${(error as Error).message}`);
      }
    }
    const seconds = (performance.now() - started) / 1000;
    pages = runs.reduce((sum, r) => sum + r.pages, 0);
    const longest = runs.reduce<DocRun | null>((a, r) => (!a || r.pages > a.pages ? r : a), null);
    const firsts = runs.map((r) => r.firstPageSeconds).sort((a, b) => a - b);
    const median = firsts[Math.floor(firsts.length / 2)] ?? 0;
    console.log(`  total: ${pages} pages in ${fmt(seconds, 2)} s = ${fmt(pages / seconds, 2)} pages/s (${label})`);
    if (longest) console.log(`  first page ready, longest document (${longest.name}, ${longest.pages} pp): ${fmt(longest.firstPageSeconds, 2)} s`);
    console.log(`  first page ready over all documents: median ${fmt(median, 2)} s, max ${fmt(firsts.at(-1) ?? 0, 2)} s`);
    console.log(`  peak RSS (process incl. render threads, VmHWM): ${mb(peakRssKb())}`);
    results.set(label, pages / seconds);
  }
  return { files: timed, pages };
}

async function ssimPhase(files: string[]): Promise<void> {
  if (!(await tool('pdftoppm'))) {
    console.log('\n== SSIM: pdftoppm is not installed, skipped ==');
    return;
  }
  console.log('\n== Fidelity: mean SSIM of our 1024 px WebP against pdftoppm scaled to the same size (not timed) ==');
  const all: number[] = [];
  for (const file of files) {
    const r = await convertOne(file, 'webp', true);
    if (r.ssim !== undefined && !Number.isNaN(r.ssim)) all.push(r.ssim);
    console.log(`  ${r.name.padEnd(32)} ${String(r.pages).padStart(4)} pp  SSIM ${r.ssim === undefined || Number.isNaN(r.ssim) ? 'n/a' : r.ssim.toFixed(4)}`);
  }
  if (all.length) console.log(`  mean over documents: ${(all.reduce((a, b) => a + b, 0) / all.length).toFixed(4)}`);
}

const results = new Map<string, number>();

async function tool(name: string): Promise<boolean> {
  try {
    await run('sh', ['-c', `command -v ${name}`]);
    return true;
  } catch {
    return false;
  }
}

async function referencePhase(files: string[], pages: number): Promise<void> {
  console.log('\n== Reference renderers over the same files (150 dpi PNG, one process per file, sequential) ==');
  const references: [string, (file: string, out: string) => [string, string[]]][] = [
    ['pdftoppm', (file, out) => {
      const password = PASSWORDS[path.basename(file)];
      return ['pdftoppm', ['-r', '150', '-png', ...(password ? ['-upw', password] : []), file, path.join(out, 'page')]];
    }],
    ['mutool', (file, out) => {
      const password = PASSWORDS[path.basename(file)];
      return ['mutool', ['draw', '-q', '-r', '150', ...(password ? ['-p', password] : []), '-o', path.join(out, 'out%d.png'), file]];
    }],
  ];
  for (const [name, command] of references) {
    if (!(await tool(name))) {
      console.log(`  ${name}: not installed (apt-get install ${name === 'mutool' ? 'mupdf-tools' : 'poppler-utils'}), skipped`);
      continue;
    }
    const out = await mkdtemp(path.join(tmpdir(), `flipbook-bench-${name}-`));
    const started = performance.now();
    for (const file of files) {
      const [bin, argv] = command(file, out);
      // Broken files make the tools exit non-zero after what they could render: that still counts.
      await run(bin, argv, { maxBuffer: 16 * 1024 * 1024 }).catch(() => undefined);
    }
    const seconds = (performance.now() - started) / 1000;
    await rm(out, { recursive: true, force: true });
    const rate = pages / seconds;
    const ratios = [...results.entries()].map(([format, ours]) => `ours (${format}) / ${name} = ${fmt(ours / rate, 2)}`).join(', ');
    console.log(`  ${name}: ${pages} pages in ${fmt(seconds, 2)} s = ${fmt(rate, 2)} pages/s; ${ratios}`);
  }
}

/** A text-heavy generated PDF: each page a title, 40 lines of prose and a few shapes. */
async function makeLongPdf(pages: number): Promise<Uint8Array> {
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

async function scalingPhase(): Promise<void> {
  console.log('\n== Scaling: peak memory vs page count (generated text PDFs, webp) ==');
  const dir = await mkdtemp(path.join(tmpdir(), 'flipbook-bench-scaling-'));
  try {
    const peaks: number[] = [];
    const growths: number[] = [];
    for (const count of [100, 1000]) {
      const file = path.join(dir, `long-${count}.pdf`);
      await writeFile(file, await makeLongPdf(count));
      resetPeakRss();
      const base = peakRssKb();
      let lastPrinted = 0;
      const workDir = await mkdtemp(path.join(dir, 'work-'));
      const started = performance.now();
      let firstPage = 0;
      // Consumes each page as the books job would after uploading it: the files are deleted.
      const result = await convertDocument({ filePath: file, autoLinks: false, workDir, ...(concurrency ? { concurrency } : {}) }, async (page) => {
        firstPage ||= performance.now();
        await Promise.all(page.images.map((image) => rm(image.path, { force: true })));
        if (page.number - lastPrinted >= 100) {
          lastPrinted = page.number;
          process.stdout.write(`  … ${page.number}/${count} pages, RSS ${mb(process.memoryUsage().rss / 1024)}\r`);
        }
      });
      const seconds = (performance.now() - started) / 1000;
      await rm(workDir, { recursive: true, force: true });
      const peak = peakRssKb();
      peaks.push(peak);
      growths.push(peak - base);
      console.log(
        `  ${String(result.pageCount).padStart(5)} pages: ${fmt(seconds, 1)} s (${fmt(result.pageCount / seconds, 2)} pages/s), first page ${fmt((firstPage - started) / 1000, 2)} s, ` +
          `peak RSS ${mb(peak)}, ${mb(peak - base)} above the level at its start (${mb(base)}: pooled render threads, earlier runs)`,
      );
    }
    console.log(`  peak ratio 1,000 pp / 100 pp: ${fmt((peaks[1] ?? 0) / (peaks[0] ?? 1), 2)}; growth during the run: ${growths.map((g) => mb(g)).join(' vs ')}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const load = () => loadavg().map((l) => l.toFixed(2)).join(', ');
console.log(`flipbook conversion benchmark — Node ${process.version}, ${availableParallelism()} cores, libvips ${sharp.versions.vips}, load average ${load()}`);
const corpusRun = args['scaling-only'] ? null : await corpusPhase();
if (corpusRun && !args['no-reference'] && !args['ssim-only']) await referencePhase(corpusRun.files, corpusRun.pages);
if (corpusRun && !args['no-ssim']) await ssimPhase(corpusRun.files);
if (!args['no-scaling'] && !args['ssim-only']) await scalingPhase();
console.log(`\nload average at the end: ${load()}`);
