/**
 * The process-wide pool of pdf.js renderers, shared by all conversions. Each
 * renderer is a child process (not a worker thread): what Skia, libvips and
 * pdf.js allocate natively lives in that process, and the operating system
 * takes all of it back when the process ends. With worker threads the
 * service kept ~720 MB above its starting footprint after converting three
 * documents, even once the idle threads had been terminated (the freed
 * memory stayed in the process's malloc arenas); with processes it goes back
 * to its starting footprint once idle renderers exit.
 *
 * Why a shared pool rather than renderers per job:
 * - Start-up: a fresh renderer spends ~300 ms loading pdf.js and sharp
 *   before it can open a document; a pooled one starts on page 1 at once.
 * - Memory: a renderer reuses what it allocated for the previous document.
 * - CPU: two jobs running at once share `maxWorkers` renderers instead of
 *   each starting one per core.
 *
 * A conversion leases workers (waiting for the first one when all are busy)
 * and hands them back clean (document closed). A worker that timed out,
 * crashed or belonged to an aborted job is terminated instead, and the pool
 * starts a new one when asked. Idle workers are unref'd (they never keep the
 * process alive) and terminated after `idleTimeoutMs`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { abortedError } from './conversion.errors.ts';
import type { FromRenderWorker, ToRenderWorker } from './pdf-render.protocol.ts';

const WORKER_FILE = fileURLToPath(new URL('./pdf-render.worker.ts', import.meta.url));
/** Ended after this long without work, so an idle service gives its memory back. */
export const DEFAULT_RENDER_IDLE_TIMEOUT_MS = 30_000;
/** Heap cap per renderer: a pathological PDF kills its renderer (handled as a page failure), not the service. */
const WORKER_HEAP_MB = 1024;
/**
 * A thread is retired after this many documents: pdf.js and Skia keep a few
 * MB per document they saw (peak RSS crept from ~690 to ~1,000 MB over 14
 * runs of a 14-page PDF, flattening out), and a fresh thread starts clean.
 */
const MAX_DOCUMENTS_PER_WORKER = 25;

export interface WorkerEvents {
  message: (message: FromRenderWorker) => void;
  /** Crashed, ran out of memory or exited on its own. */
  died: (reason: string) => void;
}

export class RenderWorker {
  readonly process: ChildProcess;
  /** Documents opened so far. */
  documents = 0;
  #events: WorkerEvents | null = null;
  #dead = false;
  readonly #exited: Promise<void>;

  constructor(options: { nice?: number; v8Flags?: readonly string[] } = {}) {
    this.process = fork(WORKER_FILE, [], {
      // Structured clone over the IPC channel, as between threads.
      serialization: 'advanced',
      // Not the parent's flags (a test runner's or an inspector's would be inherited too).
      execArgv: [`--max-old-space-size=${WORKER_HEAP_MB}`, ...(options.v8Flags ?? [])],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      // glibc gives each thread that allocates (libvips's encoder threads, Skia's) its own malloc arena, up
      // to 8 per core, and keeps what is freed in them: a renderer's RSS crept up page after page (~350-380 MB after 200
      // pages of a long document, ~390-420 MB after 1,000). Two arenas keep it at ~300 MB, no slower (docs/benchmarks.md).
      env: { ...process.env, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2' },
    });
    this.#exited = new Promise((resolve) => this.process.once('exit', () => resolve()));
    if (options.nice && this.process.pid !== undefined) {
      // Inherited by what the renderer starts (mutool, poppler): all of its drawing yields to the service's other work.
      try {
        setPriority(this.process.pid, options.nice);
      } catch {
        // Not permitted here: the renderer runs at the service's priority.
      }
    }
    // Renderers never keep the service alive by themselves: a conversion in flight does (its job,
    // its timers), and a renderer whose service has gone exits on 'disconnect'.
    this.ref(false);
    this.process.on('message', (message: FromRenderWorker) => this.#events?.message(message));
    this.process.on('error', (error) => this.#die(error.message));
    this.process.on('exit', (code, signal) => this.#die(`render worker exited with ${signal ?? `code ${code}`}`));
  }

  post(message: ToRenderWorker): void {
    if (!this.#dead && this.process.connected) this.process.send(message);
  }

  /** Whether this renderer keeps the service's event loop alive. */
  ref(keep: boolean): void {
    const channel = this.process.channel as { ref(): void; unref(): void } | undefined;
    if (keep) {
      this.process.ref();
      channel?.ref();
    } else {
      this.process.unref();
      channel?.unref();
    }
  }

  get dead(): boolean {
    return this.#dead;
  }

  /** A leased worker (someone listens) keeps the process alive until its answer comes; an idle one never does. */
  listen(events: WorkerEvents | null): void {
    this.#events = events;
    if (!this.#dead) this.ref(events !== null);
  }

  #die(reason: string): void {
    if (this.#dead) return;
    this.#dead = true;
    this.#events?.died(reason);
  }

  terminate(): Promise<void> {
    this.#dead = true;
    this.#events = null;
    if (this.process.exitCode === null && this.process.signalCode === null) {
      // Whoever awaits the exit is kept alive until it comes (an unreferenced child would let the process end first).
      this.ref(true);
      this.process.kill('SIGKILL');
    }
    return this.#exited;
  }
}

export class RenderWorkerPool {
  #maxWorkers: number;
  #idleTimeoutMs: number;
  readonly #idle: RenderWorker[] = [];
  readonly #idleTimers = new Map<RenderWorker, NodeJS.Timeout>();
  readonly #all = new Set<RenderWorker>();
  #count = 0;
  readonly #waiting: ((worker: RenderWorker) => void)[] = [];
  readonly #nice: number;
  readonly #v8Flags: readonly string[];

  /**
   * `nice`: the renderers' scheduling priority (0 the service's own, up to 19 the lowest); `v8Flags`: extra
   * flags of their V8. Both for backgroundRenderWorkerPool.
   */
  constructor(options: { maxWorkers?: number; idleTimeoutMs?: number; nice?: number; v8Flags?: readonly string[] } = {}) {
    this.#maxWorkers = Math.max(1, options.maxWorkers ?? availableParallelism());
    this.#idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_RENDER_IDLE_TIMEOUT_MS;
    this.#nice = options.nice ?? 0;
    this.#v8Flags = options.v8Flags ?? [];
  }

  get maxWorkers(): number {
    return this.#maxWorkers;
  }

  /** Process ids of the renderers alive now (leased or idle). */
  get pids(): number[] {
    return [...this.#all].filter((w) => !w.dead && w.process.pid !== undefined).map((w) => w.process.pid!);
  }

  configure(options: { maxWorkers?: number; idleTimeoutMs?: number }): void {
    if (options.maxWorkers !== undefined) this.#maxWorkers = Math.max(1, options.maxWorkers);
    if (options.idleTimeoutMs !== undefined) this.#idleTimeoutMs = options.idleTimeoutMs;
  }

  /** An idle worker, or a new one if the pool has room, else null. */
  tryAcquire(): RenderWorker | null {
    for (let worker = this.#idle.pop(); worker; worker = this.#idle.pop()) {
      clearTimeout(this.#idleTimers.get(worker));
      this.#idleTimers.delete(worker);
      if (worker.dead) {
        this.#count--;
        continue;
      }
      return worker;
    }
    if (this.#count >= this.#maxWorkers) return null;
    this.#count++;
    const worker = new RenderWorker({ nice: this.#nice, v8Flags: this.#v8Flags });
    this.#all.add(worker);
    worker.process.once('exit', () => this.#all.delete(worker));
    return worker;
  }

  /**
   * Starts renderers until `count` are idle (within the pool's size), so a conversion about to start finds them
   * loaded: a renderer takes a few hundred ms to start (pdf.js, canvas, sharp), which a book's first page waited
   * for. Unused, they end after the idle timeout like any other.
   */
  warm(count: number): void {
    while (this.#idle.length < count && this.#count < this.#maxWorkers) {
      this.#count++;
      const worker = new RenderWorker({ nice: this.#nice, v8Flags: this.#v8Flags });
      this.#all.add(worker);
      worker.process.once('exit', () => this.#all.delete(worker));
      this.release(worker);
    }
  }

  /** Waits for a worker when all are leased to other conversions. */
  acquire(signal?: AbortSignal): Promise<RenderWorker> {
    const worker = this.tryAcquire();
    if (worker) return Promise.resolve(worker);
    if (signal?.aborted) return Promise.reject(abortedError(signal));
    return new Promise((resolve, reject) => {
      const grant = (granted: RenderWorker) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(granted);
      };
      const onAbort = () => {
        this.#waiting.splice(this.#waiting.indexOf(grant), 1);
        reject(abortedError(signal));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(grant);
    });
  }

  /** Takes back a worker whose document is closed. */
  release(worker: RenderWorker): void {
    worker.listen(null);
    if (!worker.dead && worker.documents >= MAX_DOCUMENTS_PER_WORKER) {
      void this.discard(worker);
      return;
    }
    if (worker.dead) {
      this.#count--;
      this.#grantNext();
      return;
    }
    const next = this.#waiting.shift();
    if (next) {
      next(worker);
      return;
    }
    this.#idle.push(worker);
    const timer = setTimeout(() => {
      const index = this.#idle.indexOf(worker);
      if (index >= 0) this.#idle.splice(index, 1);
      this.#idleTimers.delete(worker);
      this.#count--;
      void worker.terminate();
    }, this.#idleTimeoutMs);
    timer.unref();
    this.#idleTimers.set(worker, timer);
  }

  /** Terminates a worker that cannot be trusted any more (stuck, crashed, aborted job). */
  discard(worker: RenderWorker): Promise<void> {
    this.#count--;
    const done = worker.terminate();
    this.#grantNext();
    return done;
  }

  #grantNext(): void {
    if (this.#waiting.length === 0) return;
    const worker = this.tryAcquire();
    if (worker) this.#waiting.shift()!(worker);
  }
}

/** The pool all conversions in this process share. */
export const renderWorkerPool = new RenderWorkerPool();

/**
 * V8 in a background renderer trades a little speed for memory: its heap grows
 * more slowly. Over a book's whole length, the heap of a renderer with the
 * default policy kept growing (pdf.js alone over a 2,000-page PDF: 237 MB of
 * RSS at page 250, 321 MB at page 2,000; with this flag 183 and 193 MB), while
 * the background phase asks little of JavaScript (mutool draws, sharp encodes,
 * the text is known), so the speed it costs there is small (docs/benchmarks.md).
 */
const BACKGROUND_V8_FLAGS = ['--optimize-for-size'];

/**
 * The pool of a readable book's background phase: its renderers run at a
 * lower priority (nice 10), so the pages a reader asks for meanwhile (drawn
 * at the service's priority, page-renditions.service.ts), the API and the
 * next upload's readable phase take the cores first, and the background
 * drawing uses what is left. On an idle machine it runs as fast as before.
 */
export const backgroundRenderWorkerPool = new RenderWorkerPool({ nice: 10, v8Flags: BACKGROUND_V8_FLAGS });
