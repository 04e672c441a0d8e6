/**
 * Conversion engine benchmark: `npm run bench:convert [-- options]`.
 *
 * 1. Converts every PDF of ../shared/fixtures/documents with convertDocument
 *    and the default widths (320/1024/2048 WebP), one document after another
 *    (each using all cores), writing pages to a temp dir. Documents expected to
 *    fail (by the corpus manifest) and files that are not PDFs are converted
 *    outside the timed run and reported.
 * 2. The reference of issue 32, in the same run: the native pipeline making
 *    the same outputs, two files at a time (`mutool draw -w 1024 -F png`, then
 *    `cwebp -q 80 -m 0` at 1024 and at 320 px, plus `mutool draw -F stext`),
 *    and our speed as a share of it. Also pdftoppm -r 150 and mutool draw
 *    -r 150 alone, one file at a time, as before.
 * 3. Fidelity (not timed): per corpus document, on sampled pages, the SSIM
 *    (ssim.js, default options) of our 1024 px image against the reference of
 *    issue 32 (pdftoppm at 4x the width, downscaled with Lanczos 3), beside
 *    pdftoppm's own 1024 px render against the same reference (the bar: ours
 *    >= pdftoppm's - 0.005), and lost ink (test/conversion/ink.ts: inked cells
 *    of the reference where ours carries under half its ink).
 * 4. Scaling check: peak memory converting a generated 2,000-page PDF vs a
 *    200-page one (the goal is flat; --pages to change the counts).
 *
 * Peak RSS: the renderers are child processes (and mutool theirs), so the
 * figure is the peak of the summed RSS of this process and all its
 * descendants, sampled every 50 ms; also this process's own VmHWM (reset
 * between phases via /proc/self/clear_refs).
 *
 * Options: --formats webp,jpeg   output formats to time (default webp,jpeg)
 *          --no-reference        skip the native pipeline and pdftoppm / mutool
 *          --drawer pdfjs        draw with pdf.js even where mutool is installed (FLIPBOOK_PDF_DRAWER)
 *          --ssim-pages N|all    pages per document in the SSIM table, evenly spread (default 6)
 *          --pages 200,2000      page counts of the scaling check
 *          --no-scaling          skip the 200 vs 2,000 page check
 *          --no-ssim             skip the SSIM and lost-ink table
 *          --ssim-only           only the SSIM of the corpus (no timing)
 *          --scaling-only        only the 200 vs 2,000 page check
 *          --all-widths-now      also render the 2048 px image during the conversion
 *                                (as before on-demand renditions), timed as a second run
 *
 * The default output is the service's: 320 and 1024 px during the conversion,
 * 2048 px drawn on its first request (DEFAULT_ON_DEMAND_WIDTHS).
 *          --concurrency N       render workers (default: cores)
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import sharp from 'sharp';
import { ssim } from 'ssim.js';
import { compareInk } from '../test/conversion/ink.ts';
import { DEFAULT_ON_DEMAND_WIDTHS, convertDocument, detectDocumentType, prepareDocument, renderPdfPages, type ImageFormat } from '../src/modules/conversion/conversion.service.ts';

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
    drawer: { type: 'string' },
    'ssim-pages': { type: 'string', default: '6' },
    pages: { type: 'string', default: '200,2000' },
  },
});
if (args.drawer) process.env.FLIPBOOK_PDF_DRAWER = args.drawer;
const formats = args.formats.split(',').map((f) => f.trim()) as ImageFormat[];
const concurrency = args.concurrency ? Number(args.concurrency) : undefined;

const LONG_PDF_SCRIPT = path.join(import.meta.dirname, 'long-pdf.ts');
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

/** This process and its descendants (renderers, mutool, pdftoppm), each with its parent. */
function processTree(pid = process.pid, parent = 0): { pid: number; parent: number }[] {
  const pids = [{ pid, parent }];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      for (const child of children ? children.split(' ') : []) pids.push(...processTree(Number(child), pid));
    }
  } catch {
    // The process ended while being read.
  }
  return pids;
}

const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return null;
  }
};

/** Summed RSS of this process (`self`) and of its descendants (renderers, mutool, pdftoppm), in kB. */
function treeRssKb(): { self: number; children: number } {
  const sums = { self: 0, children: 0 };
  for (const { pid, parent } of processTree()) {
    // A renderer starting mutool is forked before mutool is executed: until then the child shows the renderer's
    // pages (shared, copy-on-write) as its own RSS. Counting it added a phantom renderer (~200 MB) to the peak,
    // the more likely the more mutool runs (about 63 per renderer at 2,000 pages, 7 at 200).
    if (parent !== 0 && cmdline(pid) === cmdline(parent)) continue;
    try {
      const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
      if (pid === process.pid) sums.self += kb;
      else sums.children += kb;
    } catch {
      // Gone meanwhile.
    }
  }
  return sums;
}

/** Samples the tree's summed RSS until stopped; returns its peak in kB, and the peak of the descendants alone (renderers, mutool). */
function sampleTreeRss(): { stop: () => number; children: () => number } {
  let peak = 0;
  let children = 0;
  const sample = () => {
    const now = treeRssKb();
    peak = Math.max(peak, now.self + now.children);
    children = Math.max(children, now.children);
  };
  sample();
  const timer = setInterval(sample, 50);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return peak;
    },
    children: () => children,
  };
}

interface DocRun {
  name: string;
  pages: number;
  seconds: number;
  firstPageSeconds: number;
  failedPages: number[];
  fidelity?: Fidelity;
}

interface Fidelity {
  pages: number;
  ours: number;
  poppler: number;
  inked: number;
  lost: number;
  /** Lowest ink ratio of a sampled page (ours / reference). */
  worstInk: number;
}

async function pdftoppmPage(file: string, page: number, width: number, out: string): Promise<string | null> {
  const password = PASSWORDS[path.basename(file)];
  const root = path.join(out, `ref-${page}-${width}`);
  await run('pdftoppm', ['-f', String(page), '-l', String(page), '-scale-to-x', String(width), '-scale-to-y', '-1', '-png', '-singlefile', ...(password ? ['-upw', password] : []), file, root], { maxBuffer: 16 * 1024 * 1024 }).catch(() => undefined);
  return existsSync(`${root}.png`) ? `${root}.png` : null;
}

async function rgba(input: string | Buffer, width: number, height: number, kernel: 'lanczos3' | 'cubic' = 'lanczos3'): Promise<Buffer> {
  return sharp(input).flatten({ background: '#ffffff' }).resize(width, height, { fit: 'fill', kernel }).ensureAlpha().raw().toBuffer();
}

/**
 * SSIM and lost ink of our 1024 px images (files in `pages`) against pdftoppm
 * at 4x the width downscaled to our size (Lanczos 3), beside pdftoppm's own
 * 1024 px render against the same reference.
 */
async function fidelity(file: string, pages: Map<number, string>): Promise<Fidelity> {
  const out = await mkdtemp(path.join(tmpdir(), 'flipbook-bench-ssim-'));
  const result: Fidelity = { pages: 0, ours: 0, poppler: 0, inked: 0, lost: 0, worstInk: Infinity };
  try {
    for (const [number, ours] of pages) {
      const { width = 0, height = 0 } = await sharp(ours).metadata();
      const [big, own] = await Promise.all([pdftoppmPage(file, number, width * 4, out), pdftoppmPage(file, number, width, out)]);
      // A page pdftoppm cannot draw (a damaged page tree) has no pair to compare.
      if (!big || !own) continue;
      const pair = await (async () => {
        const reference = await sharp(big).flatten({ background: '#ffffff' }).resize(width, height, { fit: 'fill', kernel: 'lanczos3' }).png().toBuffer();
        return { reference, pixels: await Promise.all([rgba(ours, width, height), rgba(reference, width, height), rgba(own, width, height)]) };
      })().catch(() => null);
      // pdftoppm wrote something unreadable (an empty page tree): no pair to compare.
      if (!pair) continue;
      const { reference, pixels: [a, b, c] } = pair;
      const image = (data: Buffer) => ({ data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), width, height });
      result.ours += ssim(image(a), image(b)).mssim;
      result.poppler += ssim(image(c), image(b)).mssim;
      const ink = await compareInk(ours, reference);
      result.inked += ink.inked;
      result.lost += ink.lost;
      result.worstInk = Math.min(result.worstInk, ink.ratio);
      result.pages++;
      await rm(big, { force: true });
      await rm(own, { force: true });
    }
    if (result.pages) {
      result.ours /= result.pages;
      result.poppler /= result.pages;
    }
    return result;
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

/** Which pages the SSIM table samples: `--ssim-pages` of them, evenly spread, first and last included. */
function sampledPages(count: number): Set<number> {
  const wanted = args['ssim-pages'] === 'all' ? count : Math.max(1, Number(args['ssim-pages']));
  if (wanted >= count) return new Set(Array.from({ length: count }, (_, i) => i + 1));
  return new Set(Array.from({ length: wanted }, (_, i) => 1 + Math.round((i * (count - 1)) / Math.max(1, wanted - 1))));
}

async function convertOne(file: string, format: ImageFormat, measureSsim = false, allNow = false, background = false): Promise<DocRun> {
  const workDir = await mkdtemp(path.join(tmpdir(), 'flipbook-bench-'));
  const started = performance.now();
  let firstPage = 0;
  const ssimPages = new Map<number, string>();
  let sample = new Set<number>();
  try {
    const password = PASSWORDS[path.basename(file)];
    if (background) {
      // A readable book's background phase: every page drawn, its text and links known already (pixelsOnly).
      // Its renderers too (background: nice 10, V8 sized for memory), as the books job runs it.
      const input = { filePath: file, autoLinks: false, workDir, format, deferWidths: DEFAULT_ON_DEMAND_WIDTHS, background: true, ...(password ? { password } : {}), ...(concurrency ? { concurrency } : {}) };
      const result = await renderPdfPages(input, await prepareDocument(input), { pixelsOnly: true }, async () => {
        firstPage ||= performance.now();
      });
      const seconds = (performance.now() - started) / 1000;
      return { name: path.basename(file), pages: result.pageCount, seconds, firstPageSeconds: (firstPage - started) / 1000, failedPages: result.failedPages };
    }
    const result = await convertDocument(
      {
        filePath: file, autoLinks: false, workDir, format, deferWidths: allNow ? [] : DEFAULT_ON_DEMAND_WIDTHS, ...(password ? { password } : {}), ...(concurrency ? { concurrency } : {}),
        onStart: (info) => {
          sample = sampledPages(info.pageCount);
        },
      },
      async (page) => {
        firstPage ||= performance.now();
        const at1024 = page.images.find((image) => image.requestedWidth === 1024);
        if (measureSsim && at1024 && sample.has(page.number)) ssimPages.set(page.number, at1024.path);
      },
    );
    const seconds = (performance.now() - started) / 1000;
    return {
      ...(measureSsim ? { fidelity: await fidelity(file, ssimPages) } : {}),
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
  const variants = formats.flatMap((format) => [
    { format, allNow: false, background: false },
    ...(args['all-widths-now'] ? [{ format, allNow: true, background: false }] : []),
    // What a readable book's background phase does (issue 32's "background rendering"): pixels only.
    ...(format === 'webp' ? [{ format, allNow: false, background: true }] : []),
  ]);
  for (const { format, allNow, background } of variants) {
    const label = allNow ? `${format}, 2048 px too` : background ? `${format}, background phase` : format;
    const what = background ? 'the background phase of a readable book: pixels only (text and links known), 320/1024 px' : allNow ? '320/1024/2048 px during the conversion' : '320/1024 px (2048 px on request), text and links';
    console.log(`\n== Our engine (load ${load()}): ${timed.length} PDFs, ${what}, ${format}, ${concurrency ?? availableParallelism()} workers ==`);
    resetPeakRss();
    const sampler = sampleTreeRss();
    const runs: DocRun[] = [];
    const started = performance.now();
    for (const [index, file] of timed.entries()) {
      try {
        const r = await convertOne(file, format, false, allNow, background);
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
    console.log(`  peak RSS of the process tree (this process, renderers, mutool): ${mb(sampler.stop())}; this process alone (VmHWM): ${mb(peakRssKb())}`);
    results.set(label, pages / seconds);
  }
  return { files: timed, pages };
}

async function ssimPhase(files: string[]): Promise<void> {
  if (!(await tool('pdftoppm'))) {
    console.log('\n== SSIM: pdftoppm is not installed, skipped ==');
    return;
  }
  const per = args['ssim-pages'] === 'all' ? 'every page' : `${args['ssim-pages']} pages per document, evenly spread`;
  console.log(`\n== Fidelity (not timed), ${per}: SSIM of the 1024 px image against pdftoppm at 4x the width downscaled (Lanczos 3) ==`);
  console.log(`  ${'document'.padEnd(32)} ${'pages'.padStart(5)}  ${'ours'.padStart(6)}  ${'pdftoppm'.padStart(8)}  bar (ours >= pdftoppm - 0.005)  lost ink (cells)  lowest ink ratio`);
  const ours: number[] = [];
  const theirs: number[] = [];
  let below = 0;
  for (const [index, file] of files.entries()) {
    process.stdout.write(`  [${index + 1}/${files.length}] ${path.basename(file)} …`);
    const r = await convertOne(file, 'webp', true);
    process.stdout.write('\r\x1b[K');
    const f = r.fidelity;
    if (!f || f.pages === 0) {
      console.log(`  ${r.name.padEnd(32)} ${'0'.padStart(5)}  n/a (no page pdftoppm can draw)`);
      continue;
    }
    ours.push(f.ours);
    theirs.push(f.poppler);
    const ok = f.ours >= f.poppler - 0.005;
    if (!ok) below++;
    console.log(
      `  ${r.name.padEnd(32)} ${String(f.pages).padStart(5)}  ${f.ours.toFixed(4)}  ${f.poppler.toFixed(4).padStart(8)}  ${(ok ? 'ok' : 'BELOW').padEnd(30)}  ` +
        `${`${f.lost} of ${f.inked}`.padStart(16)}  ${f.worstInk.toFixed(2)}`,
    );
  }
  const mean = (list: number[]) => list.reduce((a, b) => a + b, 0) / Math.max(1, list.length);
  if (ours.length) console.log(`  mean over documents: ours ${mean(ours).toFixed(4)}, pdftoppm ${mean(theirs).toFixed(4)}; documents below the bar: ${below}`);
}

/**
 * The reference of issue 32: the native tools making our outputs (1024 and
 * 320 px WebP at quality 80 and the fastest method, text with positions),
 * two files at a time. Passwords go on their command lines: fixture passwords.
 */
async function nativePhase(files: string[], pages: number): Promise<number | null> {
  if (!(await tool('mutool')) || !(await tool('cwebp'))) {
    console.log('\n== Native pipeline: needs mutool (mupdf-tools) and cwebp (webp), skipped ==');
    return null;
  }
  console.log(`\n== Native same-output pipeline, two files at a time: mutool draw -w 1024 -F png; cwebp -q 80 -m 0 at 1024 and -resize 320 0; mutool draw -F stext (load ${load()}) ==`);
  const out = await mkdtemp(path.join(tmpdir(), 'flipbook-bench-native-'));
  const queue = [...files.entries()];
  const started = performance.now();
  const one = async (index: number, file: string) => {
    const dir = await mkdtemp(path.join(out, 'doc-'));
    const password = PASSWORDS[path.basename(file)];
    const p = password ? ['-p', password] : [];
    const t = performance.now();
    await run('mutool', ['draw', '-q', ...p, '-w', '1024', '-F', 'png', '-o', path.join(dir, 'p%d.png'), file], { maxBuffer: 16 * 1024 * 1024 }).catch(() => undefined);
    for (const png of (await readdir(dir)).filter((f) => f.endsWith('.png'))) {
      const input = path.join(dir, png);
      await run('cwebp', ['-quiet', '-q', '80', '-m', '0', input, '-o', `${input}.1024.webp`]).catch(() => undefined);
      await run('cwebp', ['-quiet', '-q', '80', '-m', '0', '-resize', '320', '0', input, '-o', `${input}.320.webp`]).catch(() => undefined);
    }
    await run('mutool', ['draw', '-q', ...p, '-F', 'stext', '-o', path.join(dir, 'text.stext'), file], { maxBuffer: 16 * 1024 * 1024 }).catch(() => undefined);
    console.log(`  [${index + 1}/${files.length}] ${path.basename(file).padEnd(32)} ${fmt((performance.now() - t) / 1000, 2).padStart(6)} s`);
    await rm(dir, { recursive: true, force: true });
  };
  await Promise.all([0, 1].map(async () => {
    for (let next = queue.shift(); next; next = queue.shift()) await one(next[0], next[1]);
  }));
  const seconds = (performance.now() - started) / 1000;
  await rm(out, { recursive: true, force: true });
  const rate = pages / seconds;
  const ratios = [...results.entries()].map(([format, ours]) => `ours (${format}) / native = ${fmt(ours / rate, 2)}x`).join(', ');
  console.log(`  native: ${pages} pages in ${fmt(seconds, 2)} s = ${fmt(rate, 2)} pages/s; ${ratios}`);
  return rate;
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

async function scalingPhase(): Promise<void> {
  const counts = args.pages.split(',').map(Number);
  console.log(`\n== Scaling: peak memory vs page count (generated text PDFs, webp, ${counts.join(' vs ')} pages; load ${load()}) ==`);
  const dir = await mkdtemp(path.join(tmpdir(), 'flipbook-bench-scaling-'));
  try {
    const peaks: number[] = [];
    for (const count of counts) {
      const file = path.join(dir, `long-${count}.pdf`);
      // Made by another process: pdf-lib's 2,000-page document would stay in this process's RSS (as garbage) and be counted as the conversion's.
      await run(process.execPath, [LONG_PDF_SCRIPT, String(count), file], { maxBuffer: 16 * 1024 * 1024 });
      resetPeakRss();
      let lastPrinted = 0;
      const workDir = await mkdtemp(path.join(dir, 'work-'));
      const sampler = sampleTreeRss();
      const started = performance.now();
      let firstPage = 0;
      // Consumes each page as the books job would after uploading it: the files are deleted.
      const result = await convertDocument({ filePath: file, autoLinks: false, workDir, deferWidths: DEFAULT_ON_DEMAND_WIDTHS, ...(concurrency ? { concurrency } : {}) }, async (page) => {
        firstPage ||= performance.now();
        await Promise.all(page.images.map((image) => rm(image.path, { force: true })));
        if (page.number - lastPrinted >= 100) {
          lastPrinted = page.number;
          const now = treeRssKb();
          process.stdout.write(`  … ${page.number}/${count} pages, RSS of the process tree ${mb(now.self + now.children)}\r`);
        }
      });
      const seconds = (performance.now() - started) / 1000;
      const peak = sampler.stop();
      await rm(workDir, { recursive: true, force: true });
      peaks.push(peak);
      console.log(
        `  ${String(result.pageCount).padStart(5)} pages: ${fmt(seconds, 1)} s (${fmt(result.pageCount / seconds, 2)} pages/s), first page ${fmt((firstPage - started) / 1000, 2)} s, ` +
          `peak RSS of the process tree (this process, renderers, mutool) ${mb(peak)}; this process alone (VmHWM) ${mb(peakRssKb())}; renderers and mutool alone ${mb(sampler.children())}`,
      );
    }
    console.log(`  peak ratio ${counts.at(-1)} pp / ${counts[0]} pp: ${fmt((peaks.at(-1) ?? 0) / (peaks[0] ?? 1), 2)}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const load = () => loadavg().map((l) => l.toFixed(2)).join(', ');
console.log(`flipbook conversion benchmark — Node ${process.version}, ${availableParallelism()} cores, libvips ${sharp.versions.vips}, load average ${load()}`);
const corpusRun = args['scaling-only'] ? null : await corpusPhase();
if (corpusRun && !args['no-reference'] && !args['ssim-only']) {
  await nativePhase(corpusRun.files, corpusRun.pages);
  await referencePhase(corpusRun.files, corpusRun.pages);
}
if (corpusRun && !args['no-ssim']) await ssimPhase(corpusRun.files);
if (!args['no-scaling'] && !args['ssim-only']) await scalingPhase();
console.log(`\nload average at the end: ${load()}`);
