/**
 * Readiness: whether this process can serve requests now. The database
 * answers, its schema is the one this code expects (no migration running or
 * missing), the file storage can be reached and written, and Redis answers
 * when the rate limits are counted there. The checks run together, each
 * bounded by a timeout, so a hung dependency answers 503 rather than hanging
 * the load balancer's probe.
 */
import type { Database } from '../../platform/db/database.ts';
import { migrationStatus } from '../../platform/db/migration-status.ts';
import type { RateLimitStore } from '../../platform/http/rate-limit-store.ts';
import type { Storage } from '../../platform/storage/storage.ts';

export const READINESS_TIMEOUT_MS = 2000;

export interface ReadinessChecks {
  database: 'ok' | 'unavailable';
  migrations: 'ok' | 'migrating';
  storage: 'ok' | 'unavailable';
  redis?: 'ok' | 'unavailable';
}

export interface Readiness {
  check(): Promise<ReadinessChecks>;
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

const passes = (work: () => Promise<unknown>) => withTimeout(work(), READINESS_TIMEOUT_MS).then(() => true, () => false);

export function createReadiness(deps: { database: Database; storage: Storage; rateLimitStore: RateLimitStore | null }): Readiness {
  return {
    async check() {
      const redisStore = deps.rateLimitStore?.check ? deps.rateLimitStore : null;
      let migrating = false;
      const [database, storage, redis] = await Promise.all([
        passes(async () => {
          await deps.database.ping();
          const status = await migrationStatus(deps.database);
          migrating = status.pending > 0 || status.running;
        }),
        passes(() => deps.storage.check()),
        redisStore ? passes(() => redisStore.check!()) : Promise.resolve(null),
      ]);
      const checks: ReadinessChecks = {
        database: database ? 'ok' : 'unavailable',
        migrations: migrating ? 'migrating' : 'ok',
        storage: storage ? 'ok' : 'unavailable',
      };
      if (redis !== null) checks.redis = redis ? 'ok' : 'unavailable';
      return checks;
    },
  };
}
