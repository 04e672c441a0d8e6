/**
 * Readiness (GET /v1/health/ready) over HTTP on a real database: 200 while
 * everything answers; 503 naming the check while the file storage cannot be
 * written, while a migration is missing or (PostgreSQL) running, while Redis
 * cannot be reached, and once the database is gone. Liveness (GET /v1/health)
 * stays 200 through the dependency failures it does not own.
 */
import assert from 'node:assert/strict';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { freePort, startService, usingPostgres, type TestService } from '../helpers.ts';

describe('readiness', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService({ worker: false });
  });
  after(() => svc?.stop().catch(() => undefined));

  const ready = () => svc.request('GET', '/v1/health/ready');

  it('is 200 with every check ok, and needs no key', async () => {
    const res = await ready();
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'ready');
    assert.deepEqual(res.body.checks, { database: 'ok', migrations: 'ok', storage: 'ok' });
    assert.equal(res.headers.get('cache-control'), 'no-store');
  });

  it('is 503 while the file storage cannot be written, and ready again once it can', async () => {
    const root = path.join(svc.dataDir, 'files');
    await mkdir(root, { recursive: true });
    await rename(root, `${root}.away`);
    await writeFile(root, 'not a directory');
    try {
      const res = await ready();
      assert.equal(res.status, 503);
      assert.equal(res.body.status, 'unavailable');
      assert.equal(res.body.checks.storage, 'unavailable');
      assert.equal(res.body.checks.database, 'ok');
      assert.equal((await svc.request('GET', '/v1/health')).status, 200);
    } finally {
      await rm(root);
      await rename(`${root}.away`, root);
    }
    assert.equal((await ready()).status, 200);
  });

  it('is 503 while the database lacks a migration of this code', async () => {
    const { runner } = svc.runtime.database;
    const { rows } = await runner.executeSql('delete from drizzle.__drizzle_migrations where created_at = (select max(created_at) from drizzle.__drizzle_migrations) returning id, hash, created_at');
    const removed = rows[0] as { id: number; hash: string; created_at: string };
    try {
      const res = await ready();
      assert.equal(res.status, 503);
      assert.equal(res.body.checks.migrations, 'migrating');
    } finally {
      await runner.executeSql('insert into drizzle.__drizzle_migrations (id, hash, created_at) values ($1, $2, $3)', [removed.id, removed.hash, removed.created_at]);
    }
    assert.equal((await ready()).status, 200);
  });

  it('is 503 while another process holds the migration lock (PostgreSQL)', { skip: !usingPostgres }, async () => {
    const client = new pg.Client({ connectionString: svc.runtime.database.url });
    await client.connect();
    try {
      await client.query('select pg_advisory_lock(727274)');
      const res = await ready();
      assert.equal(res.status, 503);
      assert.equal(res.body.checks.migrations, 'migrating');
      await client.query('select pg_advisory_unlock(727274)');
      assert.equal((await ready()).status, 200);
    } finally {
      await client.end();
    }
  });

  it('is 503 once the database is gone', async () => {
    await svc.runtime.database.close();
    const res = await ready();
    assert.equal(res.status, 503);
    assert.equal(res.body.checks.database, 'unavailable');
  });
});

describe('readiness with Redis', () => {
  it('reports Redis when the rate limits are counted there: ok when it answers, 503 when it does not', async () => {
    const up = await startService({ worker: false, env: { REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' } });
    try {
      const res = await up.request('GET', '/v1/health/ready');
      assert.equal(res.status, 200);
      assert.equal(res.body.checks.redis, 'ok');
    } finally {
      await up.stop();
    }
    const down = await startService({ worker: false, env: { REDIS_URL: `redis://127.0.0.1:${await freePort()}` } });
    try {
      const res = await down.request('GET', '/v1/health/ready');
      assert.equal(res.status, 503);
      assert.equal(res.body.checks.redis, 'unavailable');
      assert.equal(res.body.checks.database, 'ok');
    } finally {
      await down.stop();
    }
  });
});
