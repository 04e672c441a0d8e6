/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * Every page image the reader fetches goes through one queue, in order of
 * need: the pages on screen first (their stand-in, then their sharp
 * rendition), then stand-ins ahead in the direction of reading, then the
 * next view's sharp rendition, then stand-ins behind. Only a few requests
 * run at once, so a page the reader turns to never waits behind a queue of
 * prefetches; a request for a page the reader has left is cancelled (queued:
 * dropped; running: its image is pointed at an empty image, which makes the
 * browser cancel the download).
 *
 * An image the server draws on its first request (a page not drawn yet, a
 * large rendition) may be refused while the server is busy drawing (429):
 * such a load asks the server why it failed and tries again after the
 * Retry-After it gives, keeping its place, while the page shows what it has
 * (its stand-in, or the blank-paper placeholder until the stand-in arrives).
 *
 * The network model says what can be fetched at the reader's pace: the
 * throughput and latency measured from the reader's own image downloads
 * (Resource Timing), seeded from navigator.connection where the browser has
 * it, and the bytes per pixel of this book's images, learnt the same way.
 */

/** How much a load is needed: lower goes first. */
export const Need = {
  ShownStandIn: 0,
  ShownSharp: 1,
  Ahead: 2,
  NextSharp: 3,
  Behind: 4,
} as const;
export type Need = (typeof Need)[keyof typeof Need];

/** A 1x1 transparent GIF: pointing a loading image at it cancels the download without a broken-image fallback. */
const EMPTY = 'data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';

/** Tries of an image drawn on request before it is given up as broken. */
const DRAW_TRIES = 12;

/** At most this many image requests at once (HTTP/1.1 browsers open 6 connections to a host; leave room for the rest). */
const PARALLEL = 4;

interface NetworkInformationLike {
  downlink?: number;
  rtt?: number;
  saveData?: boolean;
}

export interface Load {
  readonly img: HTMLImageElement;
  readonly url: string;
  need: number;
  /** Resolves when the image has loaded (or failed, or was cancelled). */
  readonly loaded: Promise<void>;
  state: 'queued' | 'running' | 'done' | 'cancelled';
}

interface LoadInternal extends Load {
  settle: () => void;
  /** Tie-break within a need: nearer pages first. */
  order: number;
  /** Drawn by the server on request: a failure may be a busy server (429), tried again after Retry-After. */
  drawn: boolean;
  tries: number;
}

export class Loader {
  private queue: LoadInternal[] = [];
  private readonly running = new Set<LoadInternal>();
  /** Loads waiting to be tried again (a busy server). */
  private readonly retrying = new Set<LoadInternal>();
  /** Bytes per ms measured (decayed average), and the time to first byte. */
  private bytes = 0;
  private busy = 0;
  private busyUntil = 0;
  private ttfb: number;
  private seedRate: number;
  /** Bytes per pixel of this book's images, learnt from downloads. */
  private bpp = 0.12;
  private readonly pixels = new Map<string, number>();
  readonly saveData: boolean;

  constructor() {
    const connection = (navigator as Navigator & { connection?: NetworkInformationLike }).connection;
    // downlink is in Mbit/s (Chromium rounds and caps it): 1 Mbit/s = 125 bytes per ms.
    this.seedRate = connection?.downlink ? connection.downlink * 125 : 1250;
    this.ttfb = connection?.rtt ? Math.max(20, connection.rtt) : 100;
    this.saveData = Boolean(connection?.saveData);
    if (document.readyState !== 'complete') addEventListener('load', () => this.pump(), { once: true });
    if (typeof PerformanceObserver !== 'undefined' && PerformanceObserver.supportedEntryTypes?.includes('resource')) {
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries() as PerformanceResourceTiming[]) this.measure(entry);
      }).observe({ type: 'resource' });
    }
  }

  /** Bytes per ms the reader can fetch: measured once a few downloads have told, else the browser's estimate. */
  get rate(): number {
    return this.busy > 200 ? this.bytes / this.busy : this.seedRate;
  }

  /** How long an image of w x h px would take to arrive, with `queued` bytes ahead of it. */
  estimate(w: number, h: number, queued = 0): number {
    return this.ttfb + (queued + w * h * this.bpp) / this.rate;
  }

  /** Queues img to load url; `order` breaks ties within a need (lower first). */
  load(img: HTMLImageElement, url: string, need: number, order = 0, pixels = 0, drawn = false): Load {
    let settle!: () => void;
    const loaded = new Promise<void>((resolve) => (settle = resolve));
    const task: LoadInternal = { img, url, need, order, loaded, settle, state: 'queued', drawn, tries: 0 };
    if (pixels > 0) {
      this.pixels.set(url, pixels);
      if (this.pixels.size > 64) this.pixels.delete(this.pixels.keys().next().value!);
    }
    this.queue.push(task);
    this.pump();
    return task;
  }

  /** Changes how much a load is needed (the reader moved). */
  reorder(load: Load, need: number, order = 0): void {
    const task = load as LoadInternal;
    if (task.need === need && task.order === order) return;
    task.need = need;
    task.order = order;
    if (task.state === 'running') task.img.fetchPriority = need <= Need.ShownSharp ? 'high' : 'low';
    this.pump();
  }

  /** Drops a queued load, or cancels a running one. */
  cancel(load: Load): void {
    const task = load as LoadInternal;
    if (task.state === 'queued') this.queue = this.queue.filter((t) => t !== task);
    else if (task.state === 'running') {
      this.running.delete(task);
      task.img.src = EMPTY;
    } else return;
    task.state = 'cancelled';
    task.settle();
    this.pump();
  }

  private pump(): void {
    this.report();
    if (this.queue.length === 0 || this.running.size >= PARALLEL) return;
    this.queue.sort((a, b) => a.need - b.need || a.order - b.order);
    // Prefetches leave one connection free, so the page the reader turns to starts at once.
    while (this.queue.length > 0 && this.running.size < PARALLEL) {
      const next = this.queue[0]!;
      // Prefetches also wait for the document's load event: images load it waits for, detached ones too.
      if (next.need > Need.ShownSharp && (this.running.size >= PARALLEL - 1 || document.readyState !== 'complete')) break;
      this.queue.shift();
      this.start(next);
    }
    this.report();
  }

  /** The images queued or on their way, on the root element (`data-fetching`): 0 once the reader has all it asked for. */
  private report(): void {
    const count = String(this.queue.length + this.running.size + this.retrying.size);
    if (document.documentElement.dataset.fetching !== count) document.documentElement.dataset.fetching = count;
  }

  private start(task: LoadInternal): void {
    task.state = 'running';
    this.running.add(task);
    const { img } = task;
    img.fetchPriority = task.need <= Need.ShownSharp ? 'high' : 'low';
    const end = (event?: Event): void => {
      img.removeEventListener('load', end);
      img.removeEventListener('error', end);
      if (task.state !== 'running') return;
      this.running.delete(task);
      if (event?.type === 'error' && task.drawn && ++task.tries < DRAW_TRIES) {
        task.state = 'queued';
        void this.retryAfter(task);
        this.pump();
        return;
      }
      task.state = 'done';
      task.settle();
      this.pump();
    };
    img.addEventListener('load', end);
    img.addEventListener('error', end);
    img.src = task.url;
    // Already in the memory cache: complete at once, and no load event is promised before the next task.
    if (img.complete && img.naturalWidth > 0) queueMicrotask(end);
  }

  /**
   * An image drawn on request failed: asks the server why (a 429 says how long to wait), waits, and queues
   * the load again. A 404 is final (the book changed); a 200 means it is there now.
   */
  private async retryAfter(task: LoadInternal): Promise<void> {
    let wait = Math.min(8, 2 ** (task.tries - 1));
    try {
      const response = await fetch(task.url);
      if (response.status === 404) wait = -1;
      else if (response.ok) wait = 0;
      else {
        const retry = Number(response.headers.get('retry-after'));
        if (Number.isFinite(retry) && retry > 0) wait = Math.min(retry, 30);
      }
      await response.body?.cancel().catch(() => undefined);
    } catch {
      // Offline or cancelled: the backoff above.
    }
    this.retrying.add(task);
    this.report();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait * 1000));
    this.retrying.delete(task);
    // Cancelled while waiting: nothing to do.
    if (task.state !== 'queued') {
      this.report();
      return;
    }
    if (wait < 0) {
      task.state = 'done';
      task.settle();
      return;
    }
    this.queue.push(task);
    this.pump();
  }

  /** Learns throughput (bytes over the time any image download was running), latency and bytes per pixel. */
  private measure(entry: PerformanceResourceTiming): void {
    if (entry.initiatorType !== 'img' || !entry.encodedBodySize || entry.responseEnd <= 0) return;
    const size = entry.encodedBodySize;
    if (entry.responseStart > entry.requestStart && entry.requestStart > 0) {
      this.ttfb = this.ttfb * 0.8 + (entry.responseStart - entry.requestStart) * 0.2;
    }
    const begin = Math.max(entry.startTime, this.busyUntil);
    // Older samples count less: the network changes as the reader moves.
    this.bytes = this.bytes * 0.95 + size;
    this.busy = this.busy * 0.95 + Math.max(0, entry.responseEnd - begin);
    this.busyUntil = Math.max(this.busyUntil, entry.responseEnd);
    const pixels = this.pixels.get(entry.name);
    if (pixels) {
      this.pixels.delete(entry.name);
      this.bpp = this.bpp * 0.7 + (size / pixels) * 0.3;
    }
  }
}
