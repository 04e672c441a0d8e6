import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { eventually, scratchPostgres, startService, usingPostgres } from '../helpers.ts';
import type { DatabaseTarget } from '../../src/platform/db/database.ts';
import { idempotencyKeys } from '../../src/platform/http/http.tables.ts';

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
});
