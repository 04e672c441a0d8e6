/**
 * Where a page's conversion time goes, and what each way of drawing it costs
 * in fidelity: `node bench/render-profile.ts [--variants a,b] [--max-pages N] [--exact-ref] [files…]`.
 *
 * One process, one thread, no pool: each corpus PDF is opened with pdf.js once
 * per variant and every page is drawn, downscaled to 1024 and 320 px and
 * encoded as WebP as the renderer does, with the CPU time of each step
 * (process.cpuUsage, so libvips' encoder threads count). CPU time per page is
 * steadier than wall time on a shared machine. The 1024 px WebP is then
 * compared (SSIM, ssim.js defaults, not timed) with pdftoppm at the same
 * width, as bench:convert does, so a variant's speed and fidelity come from
 * the same run. mutool draw -r 150 is timed over the same pages (its CPU
 * time, from the child's rusage) as the yardstick. --exact-ref draws each
 * reference at exactly our image's size instead: pdftoppm -scale-to-x 1024
 * rounds the height up (1326 px for Letter) where our renditions round to
 * nearest (1325), and resizing the reference by that one row costs a sharp
 * image more SSIM than a soft one.
 *
 * Variants (the supersampling factor of the render, then what scales it down):
 *   s2       render at 2x the 1024 px output (2048 px), Skia 'medium' downscale
 *   s1.5     render at 1.5x; s1.25 at 1.25x
 *   s1       render at 1024 px directly
 *   s1q      render at 1024 px with imageSmoothingQuality 'high' on the page's context
 *   s1m      render at 1024 px with imageSmoothingQuality 'medium' (mipmaps) on the page's context
 *   p1, p1.5, p2  PDFium (WebAssembly, @hyzyla/pdfium, MIT) at 1x/1.5x/2x, sharp's resize to
 *            1024 and 320 px; the text still from pdf.js (timed as `text`, without a pdf.js
 *            render before it). Not a dependency: `npm install --no-save @hyzyla/pdfium` first.
 *   m1, m1.5, m2  MuPDF (`mutool run bench/mutool-raster.mujs`, one long-lived process per
 *            document) at 1x/1.5x/2x of 1024 px, into a PAM file per page; sharp's resize
 *            of the RGB pixels to the smaller widths; the text from pdf.js as for PDFium. The
 *            mutool child's CPU time is its /proc/<pid>/task/<tid>/schedstat run time (ns),
 *            read before and after each page, and counts in `render`.
 *   m1.5l, m2l  the same with sharp's linear kernel instead of lanczos3 (softer, cheaper).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, unlink } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import type * as NapiCanvas from '@napi-rs/canvas';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { RenderParameters } from 'pdfjs-dist/types/src/display/api.js';
import sharp from 'sharp';
import { ssim } from 'ssim.js';
import { fitRenderSize, renditionSize } from '../src/modules/conversion/page-images.ts';
import { normaliseTextContent } from '../src/modules/conversion/pdf-page-data.ts';
import { pdfjsDocumentOptions } from '../src/modules/conversion/pdfjs-options.ts';

const run = promisify(execFile);
const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    variants: { type: 'string', default: 's2,s1.5,s1.25,s1,s1q,s1m' },
    'max-pages': { type: 'string', default: '1000' },
    'no-ssim': { type: 'boolean', default: false },
    // The reference drawn by pdftoppm at exactly our image's width and height (-scale-to-x W
    // -scale-to-y H), instead of at 1024 px wide with poppler's own height, then resized.
    'exact-ref': { type: 'boolean', default: false },
  },
});
const maxPages = Number(args['max-pages']);
const CORPUS = path.resolve(import.meta.dirname, '../../shared/fixtures/documents');
const PASSWORDS: Record<string, string> = { 'libreoffice-writer-password.pdf': 'openpassword', 'issue6010_1.pdf': 'abc' };
const SKIP = new Set(['bug1020226.pdf', 'issue15590.pdf', 'not-a-pdf-jpeg-bytes.pdf']);

const requireFromPdfjs = createRequire(createRequire(import.meta.url).resolve('pdfjs-dist/legacy/build/pdf.mjs'));
const { createCanvas } = requireFromPdfjs('@napi-rs/canvas') as typeof NapiCanvas;
sharp.concurrency(1);

interface Variant { name: string; factor: number; quality?: 'low' | 'medium' | 'high'; pdfium?: boolean; mutool?: boolean; kernel?: 'linear' | 'cubic' | 'lanczos3' }
const VARIANTS: Record<string, Variant> = {
  s2: { name: 's2', factor: 2 },
  's1.5': { name: 's1.5', factor: 1.5 },
  's1.25': { name: 's1.25', factor: 1.25 },
  s1: { name: 's1', factor: 1 },
  s1q: { name: 's1q', factor: 1, quality: 'high' },
  s1m: { name: 's1m', factor: 1, quality: 'medium' },
  p1: { name: 'p1', factor: 1, pdfium: true },
  'p1.5': { name: 'p1.5', factor: 1.5, pdfium: true },
  p2: { name: 'p2', factor: 2, pdfium: true },
  m1: { name: 'm1', factor: 1, mutool: true },
  'm1.5': { name: 'm1.5', factor: 1.5, mutool: true },
  m2: { name: 'm2', factor: 2, mutool: true },
  'm1.5l': { name: 'm1.5l', factor: 1.5, mutool: true, kernel: 'linear' },
  m2l: { name: 'm2l', factor: 2, mutool: true, kernel: 'linear' },
};
const MUTOOL_SCRIPT = path.resolve(import.meta.dirname, 'mutool-raster.mujs');

/** CPU time (ms) of every thread of a process so far, from the scheduler's own accounting. */
function processCpuMs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
  return ns / 1e6;
}

/** Decodes a binary PAM (P7) file: header lines up to ENDHDR, then the samples. */
function parsePam(file: Buffer): { width: number; height: number; channels: number; data: Buffer } {
  const end = file.indexOf('ENDHDR\n');
  const header = file.subarray(0, end).toString('latin1');
  const field = (name: string) => Number(new RegExp(`${name} (\\d+)`).exec(header)?.[1]);
  return { width: field('WIDTH'), height: field('HEIGHT'), channels: field('DEPTH'), data: file.subarray(end + 7) };
}

/** The parts of @hyzyla/pdfium used here (not a dependency, so not typed by the package). */
interface PdfiumPage { getOriginalSize(): { originalWidth: number; originalHeight: number }; render(o: { scale: number; render: 'bitmap' }): Promise<{ width: number; height: number; data: Uint8Array }> }
interface PdfiumDocument { getPage(index: number): PdfiumPage; destroy(): void }
interface PdfiumLibrary { loadDocument(data: Buffer, password?: string): Promise<PdfiumDocument> }
let pdfiumLibrary: PdfiumLibrary | null = null;
async function pdfium(): Promise<PdfiumLibrary> {
  const name = '@hyzyla/pdfium';
  const module = (await import(name)) as { PDFiumLibrary: { init(): Promise<PdfiumLibrary> } };
  pdfiumLibrary ??= await module.PDFiumLibrary.init();
  return pdfiumLibrary;
}

const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

interface Totals { pages: number; render: number; flush: number; text: number; downscale: number; encode: number; ssimSum: number; ssimCount: number }
const blank = (): Totals => ({ pages: 0, render: 0, flush: 0, text: 0, downscale: 0, encode: 0, ssimSum: 0, ssimCount: 0 });

interface References { dir: string; digits: number; file: string }

async function references(file: string): Promise<References | null> {
  if (args['no-ssim']) return null;
  const password = PASSWORDS[path.basename(file)];
  const dir = await mkdtemp(path.join(tmpdir(), 'flipbook-profile-ref-'));
  await run('pdftoppm', ['-scale-to-x', '1024', '-scale-to-y', '-1', '-l', String(maxPages), '-png', ...(password ? ['-upw', password] : []), file, path.join(dir, 'p')], { maxBuffer: 16 << 20 }).catch(() => undefined);
  const refs = (await readdir(dir)).sort();
  return { dir, digits: refs[0] ? /-(\d+)\.png$/.exec(refs[0])![1]!.length : 1, file };
}

async function pageSsim(webp: Buffer, refs: References, n: number): Promise<number | null> {
  let ref = path.join(refs.dir, `p-${String(n).padStart(refs.digits, '0')}.png`);
  if (args['exact-ref']) {
    const { width, height } = await sharp(webp).metadata();
    const stem = path.join(refs.dir, `e-${n}-${width}x${height}`);
    ref = `${stem}.png`;
    const password = PASSWORDS[path.basename(refs.file)];
    const draw = (w: number, h: number) => run('pdftoppm', ['-f', String(n), '-l', String(n), '-scale-to-x', String(w), '-scale-to-y', String(h), '-singlefile', '-png', ...(password ? ['-upw', password] : []), refs.file, stem]).catch(() => undefined);
    if (!existsSync(ref)) {
      await draw(width!, height!);
      // pdftoppm sizes a /Rotate 90 or 270 page before turning it: ask again the other way round.
      if (existsSync(ref) && (await sharp(ref).metadata()).width !== width) await draw(height!, width!);
    }
  }
  if (!existsSync(ref)) return null;
  const a = await sharp(webp).flatten({ background: '#ffffff' }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const b = await sharp(ref).flatten({ background: '#ffffff' }).resize(a.info.width, a.info.height, { fit: 'fill' }).ensureAlpha().raw().toBuffer();
  const image = (data: Buffer) => ({ data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), width: a.info.width, height: a.info.height });
  return ssim(image(a.data), image(b)).mssim;
}

async function profilePdfium(file: string, variant: Variant, refs: References | null, totals: Totals): Promise<void> {
  const password = PASSWORDS[path.basename(file)];
  const bytes = await readFile(file);
  const library = await pdfium();
  let t = cpu();
  const raster = await library.loadDocument(bytes, password).catch(() => null);
  const doc = await getDocument(pdfjsDocumentOptions(new Uint8Array(bytes), password, 2 ** 26)).promise;
  totals.render += cpu() - t;
  if (!raster) return;
  try {
    const count = Math.min(doc.numPages, maxPages);
    for (let n = 1; n <= count; n++) {
      t = cpu();
      let bitmap: { width: number; height: number; data: Uint8Array };
      try {
        const page = raster.getPage(n - 1);
        const { originalWidth } = page.getOriginalSize();
        bitmap = await page.render({ scale: (1024 * variant.factor) / originalWidth, render: 'bitmap' });
        if (bitmap.data.length === 0) continue;
      } catch {
        continue;
      }
      let t2 = cpu();
      totals.render += t2 - t;
      t = t2;
      const page = await doc.getPage(n).catch(() => null);
      if (page) {
        const base = page.getViewport({ scale: 1 });
        normaliseTextContent(await page.getTextContent(), base);
        page.cleanup();
      }
      t2 = cpu();
      totals.text += t2 - t;
      t = t2;
      const input = sharp(Buffer.from(bitmap.data.buffer, bitmap.data.byteOffset, bitmap.data.length), { raw: { width: bitmap.width, height: bitmap.height, channels: 4 } });
      const webps = await Promise.all([1024, 320].map((width) => input.clone().resize(width, Math.max(1, Math.round((bitmap.height * width) / bitmap.width)), { fit: 'fill' }).webp({ quality: 80, effort: 0, smartSubsample: false }).toBuffer()));
      t2 = cpu();
      totals.encode += t2 - t;
      totals.pages++;
      if (refs) {
        const value = await pageSsim(webps[0]!, refs, n).catch(() => null);
        if (value !== null) {
          totals.ssimSum += value;
          totals.ssimCount++;
        }
      }
    }
  } finally {
    raster.destroy();
    await doc.destroy();
  }
}

async function profileMutool(file: string, variant: Variant, refs: References | null, totals: Totals): Promise<void> {
  const password = PASSWORDS[path.basename(file)] ?? '';
  const out = await mkdtemp(path.join(tmpdir(), 'flipbook-profile-mu-'));
  let t = cpu();
  // stdbuf: mutool's print() is block-buffered on a pipe; each answer line must arrive at once.
  const child = spawn('stdbuf', ['-oL', 'mutool', 'run', MUTOOL_SCRIPT, file], { stdio: ['pipe', 'pipe', 'pipe'] });
  child.stderr.resume();
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => ((await lines.next()).value as string | undefined) ?? 'eof';
  const pid = child.pid!;
  child.stdin.write(`${JSON.stringify(password)}\n`);
  const opened = await next();
  const doc = await getDocument(pdfjsDocumentOptions(new Uint8Array(await readFile(file)), password || undefined, 2 ** 26)).promise;
  let childMs = processCpuMs(pid);
  totals.render += cpu() - t + childMs;
  try {
    if (!opened.startsWith('open ')) return;
    const count = Math.min(doc.numPages, maxPages);
    for (let n = 1; n <= count; n++) {
      t = cpu();
      const page = await doc.getPage(n).catch(() => null);
      if (!page) continue;
      const base = page.getViewport({ scale: 1 });
      const size = fitRenderSize(base.width, base.height, Math.round(1024 * variant.factor), 2048 * 2048 * 6);
      const target = path.join(out, `p${n}-%d.pam`);
      child.stdin.write(`${JSON.stringify({ n, w: size.width, h: size.height, out: target })}\n`);
      const answer = await next();
      const pamPath = target.replace('%d', '1');
      const pam = answer.startsWith('done ') ? parsePam(await readFile(pamPath)) : null;
      await unlink(pamPath).catch(() => undefined);
      const childNow = processCpuMs(pid);
      let t2 = cpu();
      totals.render += t2 - t + (childNow - childMs);
      childMs = childNow;
      t = t2;
      normaliseTextContent(await page.getTextContent(), base);
      page.cleanup();
      t2 = cpu();
      totals.text += t2 - t;
      t = t2;
      if (!pam) continue;
      // Each width from the next larger one, as the canvas path does.
      const outs: { width: number; height: number; data: Buffer }[] = [];
      let previous = { width: pam.width, height: pam.height, data: pam.data };
      for (const width of [1024, 320]) {
        const want = renditionSize(base.width, base.height, width, 2048 * 2048 * 6);
        if (want.width !== previous.width || want.height !== previous.height) {
          const raw = { raw: { width: previous.width, height: previous.height, channels: 3 as const } };
          previous = { ...want, data: await sharp(previous.data, raw).resize(want.width, want.height, { fit: 'fill', kernel: variant.kernel ?? 'lanczos3' }).raw().toBuffer() };
        }
        outs.push(previous);
      }
      t2 = cpu();
      totals.downscale += t2 - t;
      t = t2;
      const webps = await Promise.all(outs.map((o) => sharp(o.data, { raw: { width: o.width, height: o.height, channels: 3 } }).webp({ quality: 80, effort: 0, smartSubsample: false }).toBuffer()));
      t2 = cpu();
      totals.encode += t2 - t;
      totals.pages++;
      if (refs) {
        const value = await pageSsim(webps[0]!, refs, n).catch(() => null);
        if (value !== null) {
          totals.ssimSum += value;
          totals.ssimCount++;
        }
      }
    }
  } finally {
    child.stdin.end();
    await new Promise((resolve) => child.once('close', resolve));
    await doc.destroy();
    await rm(out, { recursive: true, force: true });
  }
}

async function profile(file: string, variant: Variant, refs: References | null, totals: Totals): Promise<void> {
  if (variant.pdfium) return profilePdfium(file, variant, refs, totals);
  if (variant.mutool) return profileMutool(file, variant, refs, totals);
  const password = PASSWORDS[path.basename(file)];
  const doc = await getDocument(pdfjsDocumentOptions(new Uint8Array(await readFile(file)), password, 2 ** 26)).promise;
  try {
    const count = Math.min(doc.numPages, maxPages);
    for (let n = 1; n <= count; n++) {
      let t = cpu();
      const page = await doc.getPage(n).catch(() => null);
      if (!page) continue;
      const base = page.getViewport({ scale: 1 });
      const size = fitRenderSize(base.width, base.height, Math.round(1024 * variant.factor), 2048 * 2048 * 6);
      const viewport = page.getViewport({ scale: size.scale });
      const canvas = createCanvas(size.width, size.height);
      const context = canvas.getContext('2d');
      if (variant.quality) {
        context.imageSmoothingEnabled = true;
        context.imageSmoothingQuality = variant.quality;
      }
      try {
        await page.render({ canvas: null, canvasContext: context as unknown as RenderParameters['canvasContext'], viewport, transform: [size.width / viewport.width, 0, 0, size.height / viewport.height, 0, 0] }).promise;
      } catch {
        continue;
      }
      let t2 = cpu();
      totals.render += t2 - t;
      t = t2;
      canvas.data();
      t2 = cpu();
      totals.flush += t2 - t;
      t = t2;
      normaliseTextContent(await page.getTextContent(), base);
      t2 = cpu();
      totals.text += t2 - t;
      t = t2;
      const outs: { width: number; height: number; data: Buffer }[] = [];
      let previous = canvas;
      for (const width of [1024, 320]) {
        const target = renditionSize(base.width, base.height, width, 2048 * 2048 * 6);
        if (target.width === previous.width && target.height === previous.height) {
          outs.push({ ...target, data: previous.data() });
          continue;
        }
        const small = createCanvas(target.width, target.height);
        const c = small.getContext('2d');
        c.imageSmoothingEnabled = true;
        c.imageSmoothingQuality = 'medium';
        c.drawImage(previous, 0, 0, target.width, target.height);
        outs.push({ ...target, data: small.data() });
        previous = small;
      }
      t2 = cpu();
      totals.downscale += t2 - t;
      t = t2;
      const webps = await Promise.all(outs.map((o) => sharp(o.data, { raw: { width: o.width, height: o.height, channels: 4 } }).webp({ quality: 80, effort: 0, smartSubsample: false }).toBuffer()));
      t2 = cpu();
      totals.encode += t2 - t;
      page.cleanup();
      totals.pages++;
      if (refs) {
        const value = await pageSsim(webps[0]!, refs, n).catch(() => null);
        if (value !== null) {
          totals.ssimSum += value;
          totals.ssimCount++;
        }
      }
    }
  } finally {
    await doc.destroy();
  }
}

/** CPU ms of `mutool draw -r 150` over the first pages, from the child's rusage (bash's times). */
async function mutoolCpu(file: string, pages: number): Promise<number> {
  const password = PASSWORDS[path.basename(file)];
  const out = await mkdtemp(path.join(tmpdir(), 'flipbook-profile-mutool-'));
  try {
    const cmd = `mutool draw -q -r 150 ${password ? `-p ${password}` : ''} -o ${out}/o%d.png '${file}' 1-${pages} >/dev/null 2>&1; times`;
    const text = await new Promise<string>((resolve) => {
      const child = spawn('bash', ['-c', cmd]);
      let s = '';
      child.stdout.on('data', (d: Buffer) => (s += d.toString()));
      child.on('close', () => resolve(s));
    });
    // `times` prints the shell's, then its children's user and system time.
    const lines = text.trim().split('\n');
    const [user, sys] = (lines[1] ?? '').split(/\s+/).map((v) => {
      const m = /(\d+)m([\d.]+)s/.exec(v);
      return m ? Number(m[1]) * 60_000 + Number(m[2]) * 1000 : 0;
    });
    return (user ?? 0) + (sys ?? 0);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

const files = positionals.length ? positionals : (await readdir(CORPUS)).filter((f) => f.endsWith('.pdf') && !SKIP.has(f)).sort().map((f) => path.join(CORPUS, f));
const variants = args.variants.split(',').map((v) => VARIANTS[v]!);
const load = () => loadavg().map((l) => l.toFixed(2)).join(', ');
console.log(`render profile: ${files.length} files, up to ${maxPages} pages each, load average ${load()}`);
const all = new Map(variants.map((v) => [v.name, blank()]));
let mutoolMs = 0;
let mutoolPages = 0;
const header = `  ${'document'.padEnd(32)} ${variants.map((v) => `${v.name} ms/p SSIM`.padStart(20)).join('')}  mutool ms/p`;
console.log(header);
for (const file of files) {
  const refs = await references(file);
  const cells: string[] = [];
  let pages = 0;
  for (const variant of variants) {
    const totals = blank();
    await profile(file, variant, refs, totals);
    pages = totals.pages;
    const sum = all.get(variant.name)!;
    for (const key of Object.keys(totals) as (keyof Totals)[]) sum[key] += totals[key];
    const ms = (totals.render + totals.flush + totals.text + totals.downscale + totals.encode) / Math.max(1, totals.pages);
    cells.push(`${ms.toFixed(0).padStart(6)} ${totals.ssimCount ? (totals.ssimSum / totals.ssimCount).toFixed(4) : '   n/a'}`.padStart(20));
  }
  const m = pages ? await mutoolCpu(file, pages) : 0;
  mutoolMs += m;
  mutoolPages += pages;
  console.log(`  ${path.basename(file).padEnd(32)} ${cells.join('')}  ${(m / Math.max(1, pages)).toFixed(0).padStart(6)}`);
  if (refs) await rm(refs.dir, { recursive: true, force: true });
}
console.log(`\nCPU ms per page over ${mutoolPages} pages (load average now ${load()}); mutool draw -r 150: ${(mutoolMs / mutoolPages).toFixed(1)} ms/page`);
for (const [name, t] of all) {
  const per = (x: number) => (x / Math.max(1, t.pages)).toFixed(1).padStart(6);
  const total = t.render + t.flush + t.text + t.downscale + t.encode;
  console.log(`  ${name.padEnd(6)} render ${per(t.render)}  flush ${per(t.flush)}  text ${per(t.text)}  downscale ${per(t.downscale)}  encode ${per(t.encode)}  = ${per(total)} ms/page (${(mutoolMs / mutoolPages / (total / t.pages)).toFixed(2)}x mutool)  mean page SSIM ${t.ssimCount ? (t.ssimSum / t.ssimCount).toFixed(4) : 'n/a'}`);
}
