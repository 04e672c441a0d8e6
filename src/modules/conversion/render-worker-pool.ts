/**
 * The process-wide pool of pdf.js render threads, shared by all conversions.
 *
 * Why a shared pool rather than threads per job:
 * - Start-up: a fresh thread spends ~200-300 ms loading pdf.js and sharp
 *   before it can open a document; a pooled one starts on page 1 at once.
 * - Memory: every new thread gets new malloc arenas, and the memory Skia and
 *   libvips freed in the old ones is not handed back to the OS. With threads
 *   per job the process grew by ~100-300 MB per job (673 MB → 1.5 GB over seven
 *   runs of a 14-page PDF); reused threads reuse their memory.
 * - CPU: two jobs running at once share `maxWorkers` threads instead of each
 *   starting one per core.
 *
 * A conversion leases workers (waiting for the first one when all are busy)
 * and hands them back clean (document closed). A worker that timed out,
 * crashed or belonged to an aborted job is terminated instead, and the pool
 * starts a new one when asked. Idle workers are unref'd (they never keep the
 * process alive) and terminated after `idleTimeoutMs`.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { abortedError } from './conversion.errors.ts';
import type { FromRenderWorker } from './pdf-render.protocol.ts';

const WORKER_URL = new URL('./pdf-render.worker.ts', import.meta.url);
/** Heap cap per thread: a pathological PDF kills its thread (handled as a page failure), not the process. */
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
  readonly thread: Worker;
  /** Documents opened so far. */
  documents = 0;
  #events: WorkerEvents | null = null;
  #dead = false;

  constructor() {
    this.thread = new Worker(WORKER_URL, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    this.thread.on('message', (message: FromRenderWorker) => this.#events?.message(message));
    this.thread.on('error', (error) => this.#die(error.message));
    this.thread.on('exit', (code) => this.#die(`render worker exited with code ${code}`));
  }

  get dead(): boolean {
    return this.#dead;
  }

  listen(events: WorkerEvents | null): void {
    this.#events = events;
  }

  #die(reason: string): void {
    if (this.#dead) return;
    this.#dead = true;
    this.#events?.died(reason);
  }

  terminate(): Promise<void> {
    this.#dead = true;
    this.#events = null;
    return this.thread.terminate().then(() => undefined, () => undefined);
  }
}

export class RenderWorkerPool {
  #maxWorkers: number;
  #idleTimeoutMs: number;
  readonly #idle: RenderWorker[] = [];
  readonly #idleTimers = new Map<RenderWorker, NodeJS.Timeout>();
  #count = 0;
  readonly #waiting: ((worker: RenderWorker) => void)[] = [];

  constructor(options: { maxWorkers?: number; idleTimeoutMs?: number } = {}) {
    this.#maxWorkers = Math.max(1, options.maxWorkers ?? availableParallelism());
    this.#idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
  }

  get maxWorkers(): number {
    return this.#maxWorkers;
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
      worker.thread.ref();
      return worker;
    }
    if (this.#count >= this.#maxWorkers) return null;
    this.#count++;
    return new RenderWorker();
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
    worker.thread.unref();
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
