/**
 * Page pixels from MuPDF's `mutool draw` (Debian: mupdf-tools), the renderer
 * of choice when it is installed (issue 32): per page it draws in a fraction
 * of pdf.js's time (measured in docs/benchmarks.md), draws the fonts pdf.js
 * cannot (no cmap table), and scales huge images while decoding them. It is
 * AGPL and runs unmodified, as a separate process, like poppler's pdftoppm.
 *
 * One `mutool draw` process draws a run of consecutive pages (the render pool
 * hands each renderer runs, see pdf-render.ts): starting mutool and reading a
 * document's cross-reference and fonts costs more than drawing a text page,
 * so one process per page was 9x slower on a 117-page book. Pages are
 * written as raw PPM files into the job's private directory (PNG would cost
 * mutool more than the drawing itself) and read back as they complete.
 *
 * mutool writes "page <file> <n>" to stderr when it starts a page, and its
 * warnings for that page after it: a page is complete when the next one
 * starts or mutool exits cleanly, and its messages are what came in between.
 * Without -i, mutool stops at a page it cannot draw; that page is reported as
 * not drawn (the caller draws it another way) and the next request starts a
 * new run after it.
 *
 * A password never goes on a command line (any local user sees it): an
 * encrypted document is drawn from a copy decrypted by qpdf
 * (poppler-fallback.ts), or not by mutool at all.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';

export const MUPDF_PACKAGE = 'mupdf-tools';
/** A page mutool has not finished this long after it was asked for is drawn another way. */
const PAGE_TIMEOUT_MS = 20_000;
/** Address-space cap of a mutool process (via util-linux prlimit, when installed): a decompression bomb ends mutool, not the machine. */
const MUTOOL_ADDRESS_SPACE = 3 * 1024 ** 3;

let availability: Promise<{ mutool: boolean; prlimit: boolean }> | null = null;
/** What availability found, once it has: read when a run starts. */
let tools: { mutool: boolean; prlimit: boolean } | null = null;
const found = (command: string, args: string[]) =>
  new Promise<boolean>((resolve) => {
    execFile(command, args, { timeout: 10_000 }, (error) => resolve(!error));
  });

/**
 * Whether mutool can be used here (checked once per renderer process).
 * FLIPBOOK_PDF_DRAWER=pdfjs turns it off (to compare, or on a machine whose mutool misbehaves).
 */
export async function mutoolAvailable(): Promise<boolean> {
  if (process.env.FLIPBOOK_PDF_DRAWER === 'pdfjs') return false;
  availability ??= Promise.all([found('mutool', ['-v']), found('prlimit', ['--version'])]).then(([mutool, prlimit]) => (tools = { mutool, prlimit }));
  return (await availability).mutool;
}

/** One page's pixels: opaque RGB (3 channels) or grey (1), top row first. */
export interface DrawnPage {
  data: Buffer;
  width: number;
  height: number;
  channels: 1 | 3;
  /** What mutool said while drawing this page (warnings, errors it recovered from). */
  messages: string[];
}

interface Run {
  process: ChildProcess;
  /** The pages this process draws, in this order. */
  pages: number[];
  pattern: string;
  /** Pages started so far, in order, with the offset of their messages in `log`. */
  started: { page: number; at: number }[];
  log: string;
  exited: boolean;
  exitCode: number | null;
  waiters: Set<() => void>;
}

/** Longest run of pages one mutool process is given. */
export const MAX_RUN = 16;

export class MutoolDrawer {
  readonly #source: string;
  readonly #dir: string;
  readonly #width: number;
  readonly #maxHeight: number;
  #run: Run | null = null;
  #runs = 0;

  /**
   * Pages of `source` drawn `width` px wide, or less when the page is so tall
   * that `width` x its height would pass `maxHeight` (pixel budget).
   */
  constructor(options: { source: string; dir: string; width: number; maxHeight: number }) {
    this.#source = options.source;
    this.#dir = options.dir;
    this.#width = options.width;
    this.#maxHeight = options.maxHeight;
  }

  /**
   * Page `page`, drawn by the run in progress if it is heading there, else by
   * a new run for `page` and `next` (the pages this renderer expects to be
   * asked for after it, in order). Null when mutool could not draw it.
   */
  async draw(page: number, next: readonly number[] = []): Promise<DrawnPage | null> {
    let run = this.#run;
    if (!run || !this.#ahead(run, page)) {
      this.#stop();
      run = this.#start([page, ...next.filter((p) => p > page)].slice(0, MAX_RUN));
    }
    const ok = await this.#waitFor(run, page);
    const file = run.pattern.replace('%d', String(page));
    try {
      if (!ok) return null;
      const drawn = parsePnm(await readFile(file));
      return drawn && { ...drawn, messages: this.#messages(run, page) };
    } catch {
      return null;
    } finally {
      await rm(file, { force: true });
    }
  }

  /** Stops drawing and removes what is left on disk. */
  async close(): Promise<void> {
    this.#stop();
  }

  /** The run will draw, or has drawn and kept, this page. */
  #ahead(run: Run, page: number): boolean {
    const index = run.pages.indexOf(page);
    if (index < 0) return false;
    const reached = run.started.length;
    // Pages before the one mutool is on are complete (their files are taken once); the current and later ones are coming unless it exited.
    if (index < reached - 1) return true;
    return !run.exited || this.#complete(run, page);
  }

  #start(pages: number[]): Run {
    const pattern = path.join(this.#dir, `mupdf-${process.pid}-${++this.#runs}-%d.ppm`);
    const args = ['draw', '-w', String(this.#width), '-h', String(this.#maxHeight), '-F', 'ppm', '-o', pattern, this.#source, pages.join(',')];
    const child = tools?.prlimit ? spawn('prlimit', [`--as=${MUTOOL_ADDRESS_SPACE}`, '--', 'mutool', ...args], { stdio: ['ignore', 'ignore', 'pipe'] }) : spawn('mutool', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    const run: Run = { process: child, pages, pattern, started: [], log: '', exited: false, exitCode: null, waiters: new Set() };
    const marker = new RegExp(`page ${escapeRegExp(this.#source)} (\\d+)(?=\\D)`, 'g');
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      // Not quiet (-q): the per-page progress line, on stderr before the page's messages, is how pages are told apart.
      const scanFrom = Math.max(0, run.log.length - this.#source.length - 32);
      run.log += chunk;
      marker.lastIndex = scanFrom;
      for (let m = marker.exec(run.log); m; m = marker.exec(run.log)) {
        const page = Number(m[1]);
        if (!run.started.some((s) => s.page === page)) run.started.push({ page, at: m.index + m[0].length });
      }
      // Messages are kept for the run's pages only, trimmed if mutool repeats itself without end.
      if (run.log.length > 1_000_000) {
        const cut = run.log.length - 500_000;
        run.log = run.log.slice(cut);
        for (const s of run.started) s.at = Math.max(0, s.at - cut);
      }
      this.#wake(run);
    });
    child.on('error', () => this.#ended(run, -1));
    child.on('close', (code) => this.#ended(run, code ?? -1));
    this.#run = run;
    return run;
  }

  #ended(run: Run, code: number): void {
    run.exited = true;
    run.exitCode = code;
    this.#wake(run);
  }

  #wake(run: Run): void {
    for (const waiter of [...run.waiters]) waiter();
  }

  /** The page was drawn to the end: the next one has started, or mutool finished cleanly after it. */
  #complete(run: Run, page: number): boolean {
    const index = run.started.findIndex((s) => s.page === page);
    if (index < 0) return false;
    return index < run.started.length - 1 || (run.exited && run.exitCode === 0);
  }

  #waitFor(run: Run, page: number): Promise<boolean> {
    return new Promise((resolve) => {
      const check = () => {
        if (this.#complete(run, page)) finish(true);
        else if (run.exited) finish(false);
      };
      const timer = setTimeout(() => {
        // Stuck on this page (or on one before it): what is left is drawn by a new process.
        if (this.#run === run) this.#stop();
        finish(false);
      }, PAGE_TIMEOUT_MS);
      const finish = (ok: boolean) => {
        clearTimeout(timer);
        run.waiters.delete(check);
        resolve(ok);
      };
      run.waiters.add(check);
      check();
    });
  }

  #messages(run: Run, page: number): string[] {
    const index = run.started.findIndex((s) => s.page === page);
    if (index < 0) return [];
    const next = run.started[index + 1];
    const text = run.log.slice(run.started[index]!.at, next ? next.at - `page ${this.#source} ${next.page}`.length : undefined);
    return text.split('\n').map((line) => line.trim()).filter(Boolean);
  }

  #stop(): void {
    const run = this.#run;
    this.#run = null;
    if (!run) return;
    if (!run.exited) run.process.kill('SIGKILL');
    const remove = () => Promise.all(run.pages.map((page) => rm(run.pattern.replace('%d', String(page)), { force: true })));
    // After the process is gone, so it writes no file behind the cleanup.
    if (run.exited) void remove();
    else run.process.once('close', () => void remove());
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A binary PPM (P6) or PGM (P5) file with 8-bit samples, as mutool writes them. */
export function parsePnm(bytes: Buffer): Omit<DrawnPage, 'messages'> | null {
  const header = /^P([56])\s+(\d+)\s+(\d+)\s+255\s/.exec(bytes.subarray(0, 64).toString('latin1'));
  if (!header) return null;
  const channels = header[1] === '6' ? 3 : 1;
  const width = Number(header[2]);
  const height = Number(header[3]);
  const offset = header[0].length;
  if (bytes.length < offset + width * height * channels) return null;
  return { data: bytes.subarray(offset, offset + width * height * channels), width, height, channels };
}

/**
 * mutool's messages about an image it could not decode (the page is drawn
 * without it, as pdf.js's "Unable to decode image" warning says).
 */
export function damagedImageMessage(messages: readonly string[]): string | undefined {
  return messages.find((m) => /^error: .*\b(jpeg|jpx|jbig2|image|fax|ccitt|flate|lzw)\b/i.test(m) || /padding truncated image/.test(m));
}
