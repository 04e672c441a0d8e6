import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { eventually, scratchPostgres, startService, usingPostgres } from '../helpers.ts';
import type { DatabaseTarget } from '../../src/platform/db/database.ts';
import { idempotencyKeys } from '../../src/platform/http/http.tables.ts';
import { sql } from 'drizzle-orm';
import pino from 'pino';
import { Type } from 'typebox';
import { openDatabase } from '../../src/platform/db/database.ts';
import { JobQueue, defineJob, type JobName } from '../../src/platform/jobs/queue.ts';

describe('background jobs', () => {
  it('a job enqueued before a restart runs after it, exactly once', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-jobs-'));
    const scratch = usingPostgres ? await scratchPostgres() : null;
    const database: DatabaseTarget = scratch ? { kind: 'postgres', url: scratch.url } : { kind: 'pglite', dataDir: path.join(dataDir, 'pglite') };
    try {
      // First life: API only, no workers. Leave an expired idempotency record and enqueue the purge.
      const first = await startService({ dataDir, database, worker: false });
      const ws = await first.workspace();
      await first.runtime.database.db.insert(idempotencyKeys).values({
        workspaceId: ws.id, key: 'old', fingerprint: 'f', state: 'completed', expiresAt: new Date(Date.now() - 1000),
      });
      const jobId = await first.runtime.queue.send('maintenance.purge', { reason: 'restart test' });
      assert.ok(jobId);
      await first.stop();

      // Second life, on the same database: the worker picks the job up.
      const second = await startService({ dataDir, database, worker: true });
      try {
        const job = await eventually(async () => {
          const found = await second.runtime.queue.getJob('maintenance.purge', jobId!);
          return found?.state === 'completed' ? found : null;
        });
        assert.deepEqual(job.output, { idempotency: 1, counters: 0 });
        const left = await second.runtime.database.db.select().from(idempotencyKeys);
        assert.equal(left.length, 0);
      } finally {
        await second.stop();
      }
    } finally {
      await scratch?.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses to send a job nobody handles and a payload that does not fit', async () => {
    const svc = await startService({ worker: false });
    try {
      await assert.rejects(svc.runtime.queue.send('no.such.job' as never, {} as never), /No handler/);
      await assert.rejects(svc.runtime.queue.send('maintenance.purge', { reason: 42 } as never), /Invalid payload/);
    } finally {
      await svc.stop();
    }
  });

  it('stores a failed job\'s error without the statement\'s values (pg-boss keeps it in its table)', async () => {
    const scratch = usingPostgres ? await scratchPostgres() : null;
    const database = await openDatabase(scratch ? { kind: 'postgres', url: scratch.url } : { kind: 'pglite', dataDir: 'memory' });
    const queue = new JobQueue({ database, log: pino({ level: 'silent' }), concurrency: 1 });
    const name = 'test.fails-with-values' as JobName;
    queue.register([defineJob({
      name, version: 1, schema: Type.Object({ email: Type.String() }), retryLimit: 0,
      // PostgreSQL echoes the bad input and Drizzle appends the parameters: both hold the address.
      handle: async ({ email }) => database.db.execute(sql`select ${email}::int`),
    })]);
    try {
      await queue.start({ work: true });
      const id = await queue.send(name, { email: 'reader.person@example.org' } as never);
      const job = await eventually(async () => {
        const found = await queue.getJob(name, id!);
        return found?.state === 'failed' ? found : null;
      });
      const stored = JSON.stringify(job.output);
      assert.match(stored, /invalid input syntax for type integer/, stored);
      assert.ok(!stored.includes('reader.person') && !stored.includes('example.org'), stored);
    } finally {
      await queue.stop(1000);
      await database.close();
      await scratch?.drop();
    }
  });

  it('a job sent in a transaction wakes an idle worker when it commits, without waiting for its next poll', async () => {
    const scratch = usingPostgres ? await scratchPostgres() : null;
    const target: DatabaseTarget = scratch ? { kind: 'postgres', url: scratch.url } : { kind: 'pglite', dataDir: 'memory' };
    // Two processes' worth on PostgreSQL (the API's connection sends, the worker's listens); one database on PGlite.
    const apiDatabase = await openDatabase(target);
    const workerDatabase = scratch ? await openDatabase(target) : apiDatabase;
    const name = 'test.woken' as JobName;
    const ran: string[] = [];
    const job = defineJob({ name, version: 1, schema: Type.Object({ n: Type.String() }), handle: async ({ n }) => void ran.push(n) });
    const api = new JobQueue({ database: apiDatabase, log: pino({ level: 'silent' }), concurrency: 1 });
    // A poll this rare never happens within the test: only the wake-up can start the job.
    const worker = new JobQueue({ database: workerDatabase, log: pino({ level: 'silent' }), concurrency: 1, pollingIntervalSeconds: 600 });
    api.register([job]);
    worker.register([job]);
    try {
      await api.start({ work: false });
      await worker.start({ work: true });
      // The worker's first poll (at start) found nothing; let it go idle.
      await new Promise((resolve) => setTimeout(resolve, 500));
      await apiDatabase.db.transaction(async (tx) => {
        await api.send(name, { n: 'first' } as never, { tx });
      });
      await eventually(async () => ran.includes('first'), { timeoutMs: 30_000 });
      await api.send(name, { n: 'second' } as never);
      await eventually(async () => ran.includes('second'), { timeoutMs: 30_000 });
      assert.deepEqual(ran, ['first', 'second']);
    } finally {
      await worker.stop(1000);
      await api.stop(1000);
      if (workerDatabase !== apiDatabase) await workerDatabase.close();
      await apiDatabase.close();
      await scratch?.drop();
    }
  });
});
