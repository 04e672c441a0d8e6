/**
 * Fixed-window request counters. Every API process must see the same counts,
 * so the store is PostgreSQL or Redis; the embedded mode runs one process by
 * construction (PGlite admits one), where counting in memory is exact.
 */
import { Redis } from 'ioredis';
import type { SqlRunner } from '../db/database.ts';

export interface RateLimitStore {
  /** Adds one hit to each key in the window starting at `windowStart`; returns the new counts in order (at once when the store is in memory). */
  hit(keys: string[], windowStart: number, windowMs: number): number[] | Promise<number[]>;
  close(): Promise<void>;
  /** Throws when a shared store (Redis) cannot be reached (readiness); the others have nothing to reach. */
  check?(): Promise<void>;
}

export class MemoryRateLimitStore implements RateLimitStore {
  private readonly counters = new Map<string, { windowStart: number; windowEnd: number; count: number }>();

  hit(keys: string[], windowStart: number, windowMs: number): number[] {
    if (this.counters.size > 100_000) this.sweepExpired(Date.now());
    return keys.map((key) => {
      const current = this.counters.get(key);
      const next = current && current.windowStart === windowStart
        ? { ...current, count: current.count + 1 }
        : { windowStart, windowEnd: windowStart + windowMs, count: 1 };
      this.counters.set(key, next);
      return next.count;
    });
  }

  /** The counter keys held now (for inspection). */
  keys(): string[] {
    return [...this.counters.keys()];
  }

  /** Forgets the counters whose own window ended before `now` (a minute's or an hour's: each by its length). */
  sweepExpired(now: number): void {
    for (const [key, value] of this.counters) if (value.windowEnd <= now) this.counters.delete(key);
  }

  async close(): Promise<void> {
    this.counters.clear();
  }
}

/**
 * Coalesces the hits of concurrent requests of one process into one round trip
 * to the shared store, and keeps the counts exact: each flush adds to every
 * (key, window) the number of requests that hit it and gets back the new total
 * C; the n requests of that flush are given C-n+1 … C in arrival order, exactly
 * the counts they would have seen one at a time. While a flush is in flight the
 * next requests queue for the following one, so at most one statement per
 * process is on the wire and a burst of 50 requests costs one write instead of
 * 50 (and no longer queues 50 row locks on the same counter).
 */
export abstract class CoalescingRateLimitStore implements RateLimitStore {
  private pending: { keys: string[]; windowStart: number; windowMs: number; resolve: (counts: number[]) => void; reject: (error: unknown) => void }[] = [];
  private flushing = false;

  /** Adds `increments[i]` to `keys[i]` in its window; returns the new totals in order. Keys are sorted (no lock-order deadlocks). */
  protected abstract add(keys: string[], windowStarts: number[], increments: number[], windowsMs: number[]): Promise<number[]>;

  hit(keys: string[], windowStart: number, windowMs: number): Promise<number[]> {
    return new Promise((resolve, reject) => {
      this.pending.push({ keys, windowStart, windowMs, resolve, reject });
      // Flush after the I/O phase, so every request parsed from the same socket reads joins the batch.
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      const totals = new Map<string, { key: string; windowStart: number; windowMs: number; n: number }>();
      for (const request of batch) {
        for (const key of request.keys) {
          const id = `${request.windowStart}\u0000${key}`;
          const entry = totals.get(id) ?? { key, windowStart: request.windowStart, windowMs: request.windowMs, n: 0 };
          entry.n++;
          totals.set(id, entry);
        }
      }
      const ids = [...totals.keys()].sort();
      const entries = ids.map((id) => totals.get(id)!);
      try {
        const counts = await this.add(entries.map((e) => e.key), entries.map((e) => e.windowStart), entries.map((e) => e.n), entries.map((e) => e.windowMs));
        // The first request of a key in this batch saw total - n + 1, the next one more, and so on.
        const next = new Map(ids.map((id, i) => [id, counts[i]! - entries[i]!.n]));
        for (const request of batch) {
          request.resolve(request.keys.map((key) => {
            const id = `${request.windowStart}\u0000${key}`;
            const count = next.get(id)! + 1;
            next.set(id, count);
            return count;
          }));
        }
      } catch (error) {
        for (const request of batch) request.reject(error);
      }
    }
    this.flushing = false;
  }

  abstract close(): Promise<void>;
}

export class PostgresRateLimitStore extends CoalescingRateLimitStore {
  private readonly runner: SqlRunner;
  private flushes = 0;

  constructor(runner: SqlRunner) {
    super();
    this.runner = runner;
  }

  protected async add(keys: string[], windowStarts: number[], increments: number[], windowsMs: number[]): Promise<number[]> {
    // One statement for every counter of every request in the batch, prepared: it runs for every event-loop turn with requests.
    const windowEnds = windowStarts.map((start, i) => start + windowsMs[i]!);
    const result = await this.runner.executeSql(
      `insert into rate_limit_counters (key, window_start, count, window_end)
       select k, w, n, e from unnest($1::text[], $2::bigint[], $3::int[], $4::bigint[]) as t(k, w, n, e)
       on conflict (key, window_start) do update set count = rate_limit_counters.count + excluded.count
       returning key, window_start, count`,
      [keys, windowStarts, increments, windowEnds],
      { name: 'flipbook-rate-limit-hit' },
    );
    const counts = new Map((result.rows as { key: string; window_start: string | number; count: number }[]).map((r) => [`${r.window_start}\u0000${r.key}`, Number(r.count)]));
    if (++this.flushes % 1000 === 0) void this.sweepExpired(Date.now()).catch(() => undefined);
    return keys.map((k, i) => counts.get(`${windowStarts[i]}\u0000${k}`) ?? increments[i]!);
  }

  /**
   * Deletes the counters whose own window has ended. (By window end, not by
   * start: sweeping everything that started before the current minute would
   * also reset the access gate's hourly counters.)
   */
  async sweepExpired(now: number): Promise<void> {
    await this.runner.executeSql('delete from rate_limit_counters where window_end <= $1', [now]);
  }

  async close(): Promise<void> {}
}

/** KEYS: the counters; ARGV: their increments, then their expiries in ms. Returns the new counts. */
const HIT_SCRIPT = `
local counts = {}
for i, key in ipairs(KEYS) do
  local increment = tonumber(ARGV[i])
  local count = redis.call('INCRBY', key, increment)
  if count == increment then redis.call('PEXPIRE', key, ARGV[#KEYS + i]) end
  counts[i] = count
end
return counts`;

interface RateLimitCommands {
  flipbookRateLimitHit(numberOfKeys: number, ...args: (string | number)[]): Promise<number[]>;
}

export class RedisRateLimitStore extends CoalescingRateLimitStore {
  private readonly redis: Redis;
  private readonly prefix: string;

  constructor(url: string, prefix = 'flipbook:') {
    super();
    this.prefix = prefix;
    this.redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('flipbookRateLimitHit', { lua: HIT_SCRIPT });
  }

  protected async add(keys: string[], windowStarts: number[], increments: number[], windowsMs: number[]): Promise<number[]> {
    // One command for the whole batch (a script: INCRBY per counter, PEXPIRE when it was created), so Redis and
    // this process parse one command per flush instead of two per counter.
    const redisKeys = keys.map((key, i) => `${this.prefix}rl:${key}:${windowStarts[i]}`);
    const counts = await (this.redis as unknown as RateLimitCommands).flipbookRateLimitHit(redisKeys.length, ...redisKeys, ...increments, ...windowsMs.map((ms) => ms * 2));
    return counts.map(Number);
  }

  async check(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
