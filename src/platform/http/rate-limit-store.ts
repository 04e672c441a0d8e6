/**
 * Fixed-window request counters. Every API process must see the same counts,
 * so the store is PostgreSQL or Redis; the embedded mode runs one process by
 * construction (PGlite admits one), where counting in memory is exact.
 */
import { Redis } from 'ioredis';
import type { SqlRunner } from '../db/database.ts';

export interface RateLimitStore {
  /** Adds one hit to each key in the window starting at `windowStart`; returns the new counts in order. */
  hit(keys: string[], windowStart: number, windowMs: number): Promise<number[]>;
  close(): Promise<void>;
}

export class MemoryRateLimitStore implements RateLimitStore {
  private readonly counters = new Map<string, { windowStart: number; count: number }>();

  async hit(keys: string[], windowStart: number): Promise<number[]> {
    if (this.counters.size > 100_000) this.sweep(windowStart);
    return keys.map((key) => {
      const current = this.counters.get(key);
      const next = current && current.windowStart === windowStart ? { windowStart, count: current.count + 1 } : { windowStart, count: 1 };
      this.counters.set(key, next);
      return next.count;
    });
  }

  private sweep(windowStart: number): void {
    for (const [key, value] of this.counters) if (value.windowStart < windowStart) this.counters.delete(key);
  }

  async close(): Promise<void> {
    this.counters.clear();
  }
}

export class PostgresRateLimitStore implements RateLimitStore {
  private readonly runner: SqlRunner;
  private hits = 0;

  constructor(runner: SqlRunner) {
    this.runner = runner;
  }

  async hit(keys: string[], windowStart: number, windowMs: number): Promise<number[]> {
    // One round trip for all of a request's counters.
    const result = await this.runner.executeSql(
      `insert into rate_limit_counters (key, window_start, count)
       select k, $2, 1 from unnest($1::text[]) as k
       on conflict (key, window_start) do update set count = rate_limit_counters.count + 1
       returning key, count`,
      [keys, windowStart],
    );
    const counts = new Map((result.rows as { key: string; count: number }[]).map((r) => [r.key, Number(r.count)]));
    if (++this.hits % 1000 === 0) {
      void this.runner.executeSql('delete from rate_limit_counters where window_start < $1', [windowStart - windowMs]).catch(() => undefined);
    }
    return keys.map((k) => counts.get(k) ?? 1);
  }

  async close(): Promise<void> {}
}

export class RedisRateLimitStore implements RateLimitStore {
  private readonly redis: Redis;
  private readonly prefix: string;

  constructor(url: string, prefix = 'flipbook:') {
    this.prefix = prefix;
    this.redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
    this.redis.on('error', () => undefined);
  }

  async hit(keys: string[], windowStart: number, windowMs: number): Promise<number[]> {
    const pipeline = this.redis.multi();
    for (const key of keys) {
      const redisKey = `${this.prefix}rl:${key}:${windowStart}`;
      pipeline.incr(redisKey).pexpire(redisKey, windowMs * 2);
    }
    const results = (await pipeline.exec()) ?? [];
    return keys.map((_, i) => Number(results[i * 2]?.[1] ?? 1));
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
