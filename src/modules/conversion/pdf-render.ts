/**
 * Renders a PDF's pages on pooled renderer processes (render-worker-pool.ts) and
 * hands them to the caller in page order, one at a time.
 *
 * - Page 1 goes first, to the first worker that has the document open, and
 *   until it is back each worker holds one page only, so page 1's encode has a
 *   core to itself: the first page is ready about as fast as one worker can
 *   make it.
 * - Backpressure: at most `maxAhead` pages are dispatched but not yet accepted
 *   by onPage, so a slow consumer (upload to S3) holds rendering back instead of
 *   piling finished pages up. Page images are files, so what waits is small.
 * - A page that fails (pdf.js error, or no answer within pageTimeoutMs) becomes
 *   a blank page of the right size with `error` set, so numbering stays intact;
 *   the document fails only if every page failed. A timed-out or crashed worker
 *   is terminated (the only way to stop a pdf.js loop) and replaced; pages that
 *   were on a crashed worker are retried alone, so a second crash names the
 *   culprit page.
 * - Abort and failure terminate this job's workers at once; workers that
 *   finished cleanly go back to the pool.
 */
import { ConversionError, abortedError } from './conversion.errors.ts';
import type { DocumentInfo, RenderedPage } from './conversion.types.ts';
import { encodeBlankPage, fitRenderSize } from './page-images.ts';
import type { FromRenderWorker, RenderWorkerInit } from './pdf-render.protocol.ts';
import { renderWorkerPool, type RenderWorker, type RenderWorkerPool } from './render-worker-pool.ts';
import { MAX_RUN } from './mupdf-drawer.ts';

export const DEFAULT_PAGE_TIMEOUT_MS = 60_000;
/** Pages one worker holds at once: one rendering, one encoding. */
const PER_WORKER = 2;
/** A4 in points, for a failed page 1 whose size pdf.js could not even read. */
const FALLBACK_SIZE_PT = { width: 595.28, height: 841.89 };
/** How long a worker may take to wind down after its last page before it is terminated instead. */
const CLOSE_TIMEOUT_MS = 10_000;

/** The document and output settings every render worker gets, plus how this render is run. */
export interface RenderPdfOptions extends Omit<RenderWorkerInit, 'wantDocumentInfo'> {
  /** Workers for this document (capped by the pool size). Default: the pool size (cores). */
  concurrency?: number;
  pageTimeoutMs?: number;
  /** A document with more pages fails as soon as it is opened ('too_many_pages'). */
  maxPages?: number;
  /**
   * The pages to render and deliver, ascending, from the page count (default: every page): a book's
   * background phase draws only the pages not drawn yet.
   */
  pages?: (pageCount: number) => number[];
  /** Pages rendered ahead of the one onPage is handling. Default: 3 per worker. */
  maxAhead?: number;
  signal?: AbortSignal;
  /** Called once, before any page, as soon as the page count is known. */
  onStart?: (info: DocumentInfo) => void | Promise<void>;
  onPage: (page: RenderedPage) => Promise<void>;
  pool?: RenderWorkerPool;
}

export interface RenderPdfResult extends DocumentInfo {
  failedPages: number[];
}

interface PageFailure {
  failed: true;
  number: number;
  message: string;
  widthPt: number | null;
  heightPt: number | null;
}

/** A worker leased by this job. */
interface Lease {
  worker: RenderWorker;
  opened: boolean;
  /** page → timeout timer */
  inflight: Map<number, NodeJS.Timeout>;
  /** Running a retry alone. */
  solo: boolean;
  /** This worker reads the outline and title. */
  wantsInfo: boolean;
  /** Closing or terminated: no more work for it. */
  gone: boolean;
  /** The worker draws with mutool, in runs of pages: it takes the pages of its lane and is told which come next. */
  runs: boolean;
}

export function renderPdf(options: RenderPdfOptions): Promise<RenderPdfResult> {
  return new RenderRun(options).run();
}

class RenderRun {
  readonly #o: RenderPdfOptions;
  readonly #pool: RenderWorkerPool;
  readonly #workersWanted: number;
  readonly #pageTimeoutMs: number;
  readonly #maxAhead: number;
  readonly #init: Omit<RenderWorkerInit, 'wantDocumentInfo'>;
  readonly #leases = new Set<Lease>();
  /** Finished pages waiting for their turn, and failures to be delivered as blank pages. */
  readonly #results = new Map<number, RenderedPage | PageFailure>();
  readonly #retry: number[] = [];
  readonly #crashes = new Map<number, number>();
  readonly #failed: number[] = [];
  /** The onPage call in progress, if any. */
  #delivery: Promise<void> | null = null;
  readonly #settled = Promise.withResolvers<RenderPdfResult>();
  #pageCount: number | null = null;
  /** The pages this run delivers, in order (known once the document is open); the two cursors below index it. */
  #order: number[] | null = null;
  #info: DocumentInfo | null = null;
  #started = false;
  #nextDispatch = 0;
  #nextDeliver = 0;
  #delivering = false;
  #restartsLeft: number;
  #done = false;
  /** Size of the last delivered page: a failed page of unknown size takes it. */
  #lastSizePt = FALLBACK_SIZE_PT;

  constructor(options: RenderPdfOptions) {
    this.#o = options;
    this.#pool = options.pool ?? renderWorkerPool;
    this.#workersWanted = Math.max(1, Math.min(Math.floor(options.concurrency ?? Infinity), this.#pool.maxWorkers));
    this.#pageTimeoutMs = options.pageTimeoutMs ?? DEFAULT_PAGE_TIMEOUT_MS;
    this.#maxAhead = Math.max(PER_WORKER, options.maxAhead ?? this.#workersWanted * (PER_WORKER + 1));
    this.#restartsLeft = Math.max(4, this.#workersWanted * 2);
    this.#init = {
      filePath: options.filePath,
      ...(options.password !== undefined ? { password: options.password } : {}),
      outDir: options.outDir,
      widths: options.widths,
      format: options.format,
      quality: options.quality,
      effort: options.effort,
      maxPagePixels: options.maxPagePixels,
      maxEmbeddedImagePixels: options.maxEmbeddedImagePixels,
      ...(options.pixelsOnly ? { pixelsOnly: true } : {}),
    };
  }

  run(): Promise<RenderPdfResult> {
    const { signal } = this.#o;
    if (signal?.aborted) return Promise.reject(abortedError(signal));
    const onAbort = () => this.#fail(abortedError(signal));
    signal?.addEventListener('abort', onAbort, { once: true });
    // The first worker may have to wait for another job; the others are taken only if free.
    this.#pool.acquire(signal).then(
      (worker) => {
        if (this.#done) {
          this.#pool.release(worker);
          return;
        }
        this.#lease(worker, true);
        this.#grow();
      },
      (error: unknown) => this.#fail(error),
    );
    return this.#settled.promise.finally(() => signal?.removeEventListener('abort', onAbort));
  }

  #lease(worker: RenderWorker, wantsInfo: boolean): void {
    const lease: Lease = { worker, opened: false, inflight: new Map(), solo: false, wantsInfo, gone: false, runs: false };
    this.#leases.add(lease);
    worker.documents++;
    worker.listen({ message: (message) => this.#onMessage(lease, message), died: (reason) => this.#onCrash(lease, reason) });
    worker.post({ type: 'open', init: { ...this.#init, wantDocumentInfo: wantsInfo } });
  }

  /** Takes more free workers while there is enough work left for them. */
  #grow(): void {
    const remaining = this.#order === null ? Infinity : this.#order.length - this.#nextDispatch + this.#retry.length;
    while (!this.#done && this.#active() < this.#workersWanted && remaining > this.#active() * PER_WORKER) {
      const worker = this.#pool.tryAcquire();
      if (!worker) return;
      this.#lease(worker, false);
    }
  }

  #onMessage(lease: Lease, message: FromRenderWorker): void {
    if (message.type === 'closed') {
      this.#leases.delete(lease);
      this.#pool.release(lease.worker);
      return;
    }
    if (this.#done || lease.gone) return;
    switch (message.type) {
      case 'open-failed':
        this.#fail(new ConversionError(message.code, message.message));
        return;
      case 'opened':
        if (this.#o.maxPages !== undefined && message.pageCount > this.#o.maxPages) {
          const count = (n: number) => n.toLocaleString('en-US');
          this.#fail(new ConversionError(
            'too_many_pages',
            `This document has ${count(message.pageCount)} pages; this server converts at most ${count(this.#o.maxPages)} pages per book. Split it into parts and upload each.`,
          ));
          return;
        }
        lease.opened = true;
        lease.runs = message.runs;
        this.#pageCount ??= message.pageCount;
        if (this.#order === null) {
          const count = message.pageCount;
          const all = Array.from({ length: count }, (_, i) => i + 1);
          this.#order = this.#o.pages ? [...new Set(this.#o.pages(count))].filter((n) => Number.isInteger(n) && n >= 1 && n <= count).sort((a, b) => a - b) : all;
        }
        if (message.info) {
          this.#info = { pageCount: message.pageCount, ...message.info };
          void this.#start();
        }
        this.#pump();
        return;
      case 'page':
        this.#settle(lease, message.page.number);
        this.#results.set(message.page.number, message.page);
        this.#pump();
        void this.#deliver();
        return;
      case 'page-failed':
        this.#settle(lease, message.page);
        this.#recordFailure(message.page, message.message, message.widthPt, message.heightPt);
        return;
    }
  }

  async #start(): Promise<void> {
    try {
      await this.#o.onStart?.(this.#info!);
      this.#started = true;
      await this.#deliver();
    } catch (error) {
      this.#fail(error);
    }
  }

  #settle(lease: Lease, page: number): void {
    clearTimeout(lease.inflight.get(page));
    lease.inflight.delete(page);
    lease.solo = false;
  }

  /** The next page for this worker, with the pages of its lane that follow (for a mutool run), if it draws in runs. */
  #nextPage(lease: Lease): { page: number; next?: number[] } | null {
    const retryPage = this.#retry[0];
    if (retryPage !== undefined) {
      if (lease.inflight.size > 0) return null;
      this.#retry.shift();
      lease.solo = true;
      return { page: retryPage };
    }
    if (this.#order === null || this.#nextDispatch >= this.#order.length) return null;
    if (this.#nextDispatch >= this.#nextDeliver + this.#maxAhead) return null;
    if (!lease.runs) return { page: this.#order[this.#nextDispatch++]! };
    const lanes = this.#lanes();
    if (lanes[this.#nextDispatch % lanes.length] !== lease) return null;
    const index = this.#nextDispatch++;
    return { page: this.#order[index]!, next: this.#planned(index, lanes.length) };
  }

  /**
   * Workers drawing with mutool share the pages in lanes, the i-th page of the
   * run's order (#order) going to lane i mod lanes: pages are still dispatched
   * in order, a few ahead of delivery, yet each worker knows the pages it gets
   * next, which one mutool process then draws in a run (mupdf-drawer.ts). A
   * lane change (a worker added or replaced) costs a new run, nothing else.
   */
  #lanes(): Lease[] {
    return [...this.#leases].filter((l) => l.opened && !l.gone && l.runs);
  }

  /** The pages the lane of the order's `index`-th page gets after it, in order, for its mutool run. */
  #planned(index: number, lanes: number): number[] {
    const order = this.#order ?? [];
    const next: number[] = [];
    for (let i = index + lanes; i < order.length && next.length < MAX_RUN - 1; i += lanes) next.push(order[i]!);
    return next;
  }

  #pump(): void {
    if (this.#done) return;
    // Until page 1 is back, one page per worker: page 1's encode then has a
    // core to itself instead of sharing it with page 2's render.
    const limit = this.#nextDeliver > 0 || (this.#order !== null && this.#results.has(this.#order[0]!)) ? PER_WORKER : 1;
    // Again while any worker took a page: with lanes, the next page may be for a worker already passed.
    for (let progress = true; progress;) {
      progress = false;
      for (const lease of this.#leases) {
        while (lease.opened && !lease.gone && !lease.solo && lease.inflight.size < limit) {
          const taken = this.#nextPage(lease);
          if (taken === null) break;
          progress = true;
          const { page, next } = taken;
          const timer = setTimeout(() => this.#onTimeout(lease, page), this.#pageTimeoutMs);
          lease.inflight.set(page, timer);
          lease.worker.post(next ? { type: 'render', page, next } : { type: 'render', page });
        }
      }
    }
    if (this.#order === null) return;
    const allDispatched = this.#nextDispatch >= this.#order.length && this.#retry.length === 0;
    for (const lease of [...this.#leases]) {
      const surplus = this.#active() > Math.max(1, this.#order.length);
      if ((allDispatched || surplus) && lease.opened && !lease.gone && lease.inflight.size === 0 && (this.#info !== null || !lease.wantsInfo)) {
        this.#close(lease);
      }
    }
    if (!allDispatched) this.#grow();
  }

  /** Leased workers still taking pages (not winding down). */
  #active(): number {
    let count = 0;
    for (const lease of this.#leases) if (!lease.gone) count++;
    return count;
  }

  #onTimeout(lease: Lease, page: number): void {
    if (this.#done || lease.gone) return;
    const ms = this.#pageTimeoutMs;
    const limit = ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
    lease.inflight.delete(page);
    this.#replace(lease);
    this.#recordFailure(page, `This page took longer than ${limit} to render and was skipped.`, null, null);
  }

  #onCrash(lease: Lease, reason: string): void {
    if (this.#done || lease.gone) return;
    if (!lease.opened && this.#pageCount === null && this.#active() === 1) {
      this.#fail(new ConversionError('render_failed', `The PDF renderer stopped unexpectedly (${reason}).`));
      return;
    }
    const pages = [...lease.inflight.keys()];
    for (const timer of lease.inflight.values()) clearTimeout(timer);
    lease.inflight.clear();
    this.#replace(lease);
    for (const page of pages) {
      const crashes = (this.#crashes.get(page) ?? 0) + 1;
      this.#crashes.set(page, crashes);
      if (crashes >= 2) this.#recordFailure(page, 'This page could not be rendered (the renderer ran out of memory or crashed on it).', null, null);
      else this.#retry.push(page);
    }
    this.#retry.sort((a, b) => a - b);
    this.#pump();
  }

  /** Terminates a stuck or crashed worker and leases a fresh one if there is work left. */
  #replace(lease: Lease): void {
    const orphans = [...lease.inflight.keys()];
    this.#discard(lease);
    this.#retry.push(...orphans);
    this.#retry.sort((a, b) => a - b);
    const needsInfo = lease.wantsInfo && this.#info === null;
    const workLeft = needsInfo || this.#retry.length > 0 || this.#order === null || this.#nextDispatch < this.#order.length;
    if (!workLeft) return;
    if (this.#restartsLeft-- <= 0) {
      this.#fail(new ConversionError('render_failed', 'The PDF renderer kept crashing on this document, so the conversion was stopped.'));
      return;
    }
    if (this.#active() > 0 && !needsInfo) {
      this.#grow();
      return;
    }
    this.#pool.acquire(this.#o.signal).then(
      (worker) => {
        if (this.#done) this.#pool.release(worker);
        else this.#lease(worker, needsInfo);
      },
      (error: unknown) => this.#fail(error),
    );
  }

  /** Done with this worker: it finishes, closes the document and returns to the pool. */
  #close(lease: Lease): void {
    lease.gone = true;
    lease.worker.post({ type: 'close' });
    const timer = setTimeout(() => {
      if (this.#leases.delete(lease)) void this.#pool.discard(lease.worker);
    }, CLOSE_TIMEOUT_MS);
    timer.unref();
  }

  #discard(lease: Lease): Promise<void> {
    lease.gone = true;
    for (const timer of lease.inflight.values()) clearTimeout(timer);
    lease.inflight.clear();
    this.#leases.delete(lease);
    lease.worker.listen(null);
    return this.#pool.discard(lease.worker);
  }

  #recordFailure(page: number, message: string, widthPt: number | null, heightPt: number | null): void {
    this.#failed.push(page);
    this.#results.set(page, { failed: true, number: page, message, widthPt, heightPt });
    this.#pump();
    void this.#deliver();
  }

  /**
   * A failed page becomes a blank page when its turn comes, so that a page of
   * unknown size can take the size of the page before it (in a book, the
   * likeliest size), known by then because delivery is in order.
   */
  async #blankPage(failure: PageFailure): Promise<RenderedPage> {
    const sizePt = failure.widthPt && failure.heightPt ? { width: failure.widthPt, height: failure.heightPt } : this.#lastSizePt;
    const o = this.#o;
    const size = fitRenderSize(sizePt.width, sizePt.height, Math.max(1, ...o.widths), o.maxPagePixels);
    // No widths (the page's data only): no image either.
    const images = o.widths.length === 0 ? [] : await encodeBlankPage(size, { ...o, baseName: `page-${String(failure.number).padStart(5, '0')}` });
    return {
      number: failure.number,
      widthPt: Math.round(sizePt.width * 100) / 100,
      heightPt: Math.round(sizePt.height * 100) / 100,
      images,
      text: [],
      links: [],
      error: failure.message,
    };
  }

  async #deliver(): Promise<void> {
    if (this.#delivering || !this.#started || this.#done) return;
    this.#delivering = true;
    try {
      for (;;) {
        const number = this.#order?.[this.#nextDeliver];
        const ready = number === undefined ? undefined : this.#results.get(number);
        if (!ready || this.#done) break;
        this.#results.delete(number!);
        const page = 'failed' in ready ? await this.#blankPage(ready) : ready;
        this.#lastSizePt = { width: page.widthPt, height: page.heightPt };
        // Known as in progress before onPage starts: an abort it triggers itself must wait for it too.
        const delivery = Promise.resolve().then(() => this.#o.onPage(page));
        this.#delivery = delivery;
        try {
          await delivery;
        } finally {
          this.#delivery = null;
        }
        this.#nextDeliver++;
        this.#pump();
      }
    } catch (error) {
      this.#fail(error);
      return;
    } finally {
      this.#delivering = false;
    }
    if (this.#order !== null && this.#nextDeliver >= this.#order.length) this.#finish();
    // A result may have landed while onPage ran for the previous page.
    else if (this.#order !== null && this.#results.has(this.#order[this.#nextDeliver]!)) await this.#deliver();
  }

  #finish(): void {
    if (this.#done) return;
    const count = this.#pageCount ?? 0;
    if (this.#failed.length >= (this.#order?.length ?? count) && (this.#order?.length ?? count) > 0) {
      this.#fail(new ConversionError('render_failed', count === 1 ? 'The only page of this PDF could not be rendered.' : `None of the ${count} pages of this PDF could be rendered.`));
      return;
    }
    this.#done = true;
    // Every page was delivered, so no worker still writes for this job: they can wind down on their own.
    for (const lease of [...this.#leases]) if (!lease.gone) this.#close(lease);
    this.#settled.resolve({ ...this.#info!, failedPages: [...this.#failed].sort((a, b) => a - b) });
  }

  #fail(error: unknown): void {
    if (this.#done) return;
    this.#done = true;
    // Terminated, not closed: nothing may keep rendering or writing for a failed job. The caller hears of the failure only
    // once the page it is storing has been stored, so a cleanup it then runs (a cancelled book's files) is not overtaken by that write.
    const delivering = this.#delivery?.catch(() => undefined);
    void Promise.all([...[...this.#leases].map((lease) => this.#discard(lease)), delivering]).finally(() => this.#settled.reject(error));
  }
}

/**
 * One page at one width, for renditions made on demand (a zoomed reader, a
 * width left out of the conversion): one pooled renderer opens the document,
 * draws the page and closes it. Resolves with the image file, or null when the
 * page cannot be drawn.
 */
export async function renderPdfPage(options: Omit<RenderWorkerInit, 'wantDocumentInfo' | 'widths'> & { page: number; width: number; widths?: number[]; pool?: RenderWorkerPool; timeoutMs?: number; signal?: AbortSignal }): Promise<RenderedPage | null> {
  const pool = options.pool ?? renderWorkerPool;
  const worker = await pool.acquire(options.signal);
  // `widths`: several at once from one render (a page not drawn yet, asked for on demand), index-aligned like the conversion's.
  const { page, width, widths, pool: _pool, timeoutMs, signal, ...init } = options;
  return new Promise<RenderedPage | null>((resolve, reject) => {
    let settled = false;
    const finish = (result: RenderedPage | null, error?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (error !== undefined) reject(error);
      else resolve(result);
    };
    // A stuck or aborted render ends its renderer (the only way to stop pdf.js); a finished one closes the document.
    const kill = () => {
      worker.listen(null);
      void pool.discard(worker);
    };
    const timer = setTimeout(() => {
      kill();
      finish(null);
    }, timeoutMs ?? DEFAULT_PAGE_TIMEOUT_MS);
    const onAbort = () => {
      kill();
      finish(null, abortedError(signal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    let result: RenderedPage | null = null;
    worker.listen({
      message: (message) => {
        if (message.type === 'opened') {
          if (page > message.pageCount) worker.post({ type: 'close' });
          else worker.post({ type: 'render', page });
        } else if (message.type === 'open-failed') {
          worker.post({ type: 'close' });
        } else if (message.type === 'page') {
          result = message.page;
          worker.post({ type: 'close' });
        } else if (message.type === 'page-failed') {
          worker.post({ type: 'close' });
        } else if (message.type === 'closed') {
          pool.release(worker);
          finish(result);
        }
      },
      died: () => {
        void pool.discard(worker);
        finish(null);
      },
    });
    worker.documents++;
    worker.post({ type: 'open', init: { ...init, widths: widths ?? [width], wantDocumentInfo: false, pdfjsOnly: true } });
  });
}
