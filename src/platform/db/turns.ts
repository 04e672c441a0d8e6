/**
 * Turns on PGlite's one connection. The embedded database runs in the
 * service's own thread and serves one statement or transaction at a time;
 * PGlite's own queue is first come, first served, so a burst of reader-event
 * ingestion (dozens of transactions queued) kept the webhook relay and
 * dispatcher waiting behind all of it, and since each operation's end starts
 * the next one in the same microtask chain, the thread's network work
 * (answers of outbound requests, new requests) waited for the whole queue too.
 *
 * Here every operation names a lane. The connection goes round the lanes that
 * have work, one operation each, so an operation waits for at most one
 * operation of every other lane, whatever they have queued. Between two
 * operations the thread goes back to the event loop (setImmediate), so network
 * I/O is served between database operations rather than after the queue.
 * Operations run one at a time, as PGlite ran them: nothing new can deadlock.
 */

export interface LaneStats {
  /** Operations started. */
  operations: number;
  /** Time from being queued to starting (ms): sum, and the largest. */
  waitMs: number;
  maxWaitMs: number;
  /** Time from starting to settling (ms). */
  runMs: number;
  /** The most operations that waited at once. */
  maxQueued: number;
}

type Task = () => void;

export class ConnectionTurns {
  /** Lanes in the order they take turns; a lane stays once it has been used. */
  private readonly lanes: { name: string; queue: Task[]; stats: LaneStats }[] = [];
  private readonly byName = new Map<string, (typeof this.lanes)[number]>();
  /** Index of the lane that had the last turn (the next goes to the lanes after it, a lane added since included). */
  private last = -1;
  private busy = false;

  /** Runs `operation` when its lane's turn comes; one operation at a time over all lanes. */
  run<T>(laneName: string, operation: () => Promise<T>): Promise<T> {
    const lane = this.lane(laneName);
    return new Promise<T>((resolve, reject) => {
      const queuedAt = performance.now();
      lane.queue.push(() => {
        const startedAt = performance.now();
        const wait = startedAt - queuedAt;
        lane.stats.operations++;
        lane.stats.waitMs += wait;
        if (wait > lane.stats.maxWaitMs) lane.stats.maxWaitMs = wait;
        let settled: Promise<T>;
        try {
          settled = operation();
        } catch (error) {
          settled = Promise.reject(error);
        }
        settled.then(resolve, reject).finally(() => {
          lane.stats.runMs += performance.now() - startedAt;
          // Back to the event loop before the next turn: the network I/O that came in meanwhile is served first.
          setImmediate(() => this.turn());
        });
      });
      if (lane.queue.length > lane.stats.maxQueued) lane.stats.maxQueued = lane.queue.length;
      if (!this.busy) this.turn();
    });
  }

  /** Per lane: what its operations waited and ran, since the start. */
  stats(): Record<string, LaneStats> {
    return Object.fromEntries(this.lanes.map((l) => [l.name, { ...l.stats }]));
  }

  private lane(name: string) {
    let lane = this.byName.get(name);
    if (!lane) {
      lane = { name, queue: [], stats: { operations: 0, waitMs: 0, maxWaitMs: 0, runMs: 0, maxQueued: 0 } };
      this.lanes.push(lane);
      this.byName.set(name, lane);
    }
    return lane;
  }

  /** Starts the first waiting operation of the next lane that has one, round the lanes; idle when none waits. */
  private turn(): void {
    for (let i = 1; i <= this.lanes.length; i++) {
      const index = (this.last + i) % this.lanes.length;
      const task = this.lanes[index]!.queue.shift();
      if (task) {
        this.last = index;
        this.busy = true;
        task();
        return;
      }
    }
    this.busy = false;
  }
}
