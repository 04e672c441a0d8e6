import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { openDatabase } from '../../src/platform/db/database.ts';
import { ConnectionTurns } from '../../src/platform/db/turns.ts';
import { scratchPostgres, usingPostgres } from '../helpers.ts';

describe('turns on the embedded database connection', () => {
  it('goes round the lanes: an operation waits for at most one of each other lane, one runs at a time', async () => {
    const turns = new ConnectionTurns();
    const order: string[] = [];
    let running = 0;
    const op = (name: string) => async () => {
      running++;
      assert.equal(running, 1, 'two operations ran at once');
      await new Promise((resolve) => setImmediate(resolve));
      order.push(name);
      running--;
      return name;
    };
    const burst = Array.from({ length: 6 }, (_, i) => turns.run('ingest', op(`ingest${i}`)));
    const relay = turns.run('webhooks', op('relay'));
    const claim = turns.run('webhooks', op('claim'));
    assert.equal(await relay, 'relay');
    await Promise.all([...burst, claim]);
    assert.deepEqual(order, ['ingest0', 'relay', 'ingest1', 'claim', 'ingest2', 'ingest3', 'ingest4', 'ingest5']);
    const stats = turns.stats();
    assert.equal(stats.ingest!.operations, 6);
    assert.equal(stats.webhooks!.operations, 2);
  });

  it('a failed operation rejects its caller only, and the next ones still run', async () => {
    const turns = new ConnectionTurns();
    const failed = turns.run('a', async () => { throw new Error('boom'); });
    const thrown = turns.run('a', () => { throw new Error('sync boom'); });
    const next = turns.run('b', async () => 'ok');
    await assert.rejects(failed, /boom/);
    await assert.rejects(thrown, /sync boom/);
    assert.equal(await next, 'ok');
  });

  it('PGlite: a lane\'s query is served beside a burst of others, and timers run between operations', { skip: usingPostgres }, async () => {
    const database = await openDatabase({ kind: 'pglite', dataDir: 'memory' });
    try {
      await database.db.execute(sql`create table t (id serial primary key, v int)`);
      let defaultDone = 0;
      const burst = Array.from({ length: 40 }, (_, i) =>
        database.db.transaction(async (tx) => {
          await tx.execute(sql`insert into t (v) select g from generate_series(1, 200) g`);
          await tx.execute(sql`select sum(v) from t where v = ${i}`);
        }).then(() => { defaultDone++; }));
      // The webhook lane's transaction and query come after the whole burst was queued.
      const lane = database.lane('webhooks');
      const timer = { ranAfter: -1 };
      setTimeout(() => { timer.ranAfter = defaultDone; }, 0);
      const rows = await lane.transaction(async (tx) => ((await tx.execute(sql`select count(*)::int as n from t`)) as unknown as { rows: { n: number }[] }).rows);
      const doneWhenServed = defaultDone;
      await Promise.all(burst);
      assert.ok(doneWhenServed <= 2, `the lane waited for ${doneWhenServed} operations of the burst`);
      assert.ok(rows[0]!.n <= 2 * 200);
      assert.ok(timer.ranAfter >= 0 && timer.ranAfter < 40, timer.ranAfter < 0 ? 'a timer waited for the whole burst' : `a timer waited for ${timer.ranAfter} operations of the burst`);
      const stats = database.laneStats()!;
      assert.equal(stats.webhooks!.operations, 1);
      assert.ok(stats.default!.operations >= 41);
    } finally {
      await database.close();
    }
  });

  it('PostgreSQL: a lane is the database itself (the webhook loop gets its own pool there)', { skip: !usingPostgres }, async () => {
    const scratch = await scratchPostgres();
    const database = await openDatabase({ kind: 'postgres', url: scratch.url });
    try {
      assert.equal(database.lane('webhooks'), database.db);
      assert.equal(database.laneStats(), null);
    } finally {
      await database.close();
      await scratch.drop();
    }
  });
});
