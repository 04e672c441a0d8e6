/**
 * The rate-limit stores keep counters of windows of different lengths side by
 * side (the API's minute, the access gate's quarter hour and hour, the lead
 * form's ten minutes). Sweeping old counters must go by each counter's own
 * window: a sweep by start time alone reset the gate's hourly counters every
 * thousand flushes, which let a client past "five sign-in links an hour".
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryRateLimitStore, PostgresRateLimitStore } from '../../src/platform/http/rate-limit-store.ts';
import { startService, usingPostgres, type TestService } from '../helpers.ts';

const HOUR = 3_600_000;
const MINUTE = 60_000;
/** Half past some hour: the hour's window is open, the minute two minutes ago is over. */
const NOW = Math.floor(Date.now() / HOUR) * HOUR + 30 * MINUTE;
const thisHour = NOW - 30 * MINUTE;
const thisMinute = NOW;
const twoMinutesAgo = NOW - 2 * MINUTE;

describe('rate-limit counters are swept by their own window', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService({ worker: false });
  });
  after(() => svc.stop());

  it('in memory: an hour\'s counter outlives a sweep that drops an ended minute', async () => {
    const store = new MemoryRateLimitStore();
    for (let i = 0; i < 3; i++) store.hit(['gate:address'], thisHour, HOUR);
    store.hit(['api:old'], twoMinutesAgo, MINUTE);
    store.hit(['api:now'], thisMinute, MINUTE);
    store.sweepExpired(NOW);
    assert.deepEqual(store.keys().sort(), ['api:now', 'gate:address']);
    assert.deepEqual(store.hit(['gate:address'], thisHour, HOUR), [4]);
  });

  it(`in the database (${usingPostgres ? 'PostgreSQL' : 'PGlite'}): the same, and the counts stay exact`, async () => {
    const runner = svc.runtime.database.runner;
    const store = new PostgresRateLimitStore(runner);
    const prefix = `sweep-${process.pid}-${Date.now()}:`;
    for (let i = 0; i < 3; i++) await store.hit([`${prefix}gate`], thisHour, HOUR);
    await store.hit([`${prefix}old`], twoMinutesAgo, MINUTE);
    await store.hit([`${prefix}now`], thisMinute, MINUTE);
    await store.sweepExpired(NOW);
    const rows = (await runner.executeSql('select key, window_end from rate_limit_counters where key like $1 order by key', [`${prefix}%`])).rows as { key: string; window_end: string | number }[];
    assert.deepEqual(rows.map((r) => [r.key, Number(r.window_end)]), [[`${prefix}gate`, thisHour + HOUR], [`${prefix}now`, thisMinute + MINUTE]]);
    assert.deepEqual(await store.hit([`${prefix}gate`], thisHour, HOUR), [4]);
    await store.close();
  });
});
