/** The analytics `date` parameter: every form, time zones, DST and refusals (pure; no database). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDateRange } from '../../src/modules/analytics/date-range.ts';

const iso = (d: Date | null) => d?.toISOString() ?? null;
const range = (date: string | undefined, tz?: string, now = new Date('2026-03-15T10:00:00Z')) => {
  const r = parseDateRange(date, tz, now);
  return [iso(r.from), iso(r.to)];
};
const refusal = (date: string | undefined, tz?: string) => {
  try {
    parseDateRange(date, tz);
  } catch (error) {
    return error as { status: number; details: Record<string, string[]> };
  }
  assert.fail(`${date} / ${tz} was accepted`);
};

describe('date range', () => {
  it('reads one day and an inclusive range of days, in UTC by default', () => {
    assert.deepEqual(range('2026-03-01'), ['2026-03-01T00:00:00.000Z', '2026-03-02T00:00:00.000Z']);
    assert.deepEqual(range('2026-02-27,2026-03-01'), ['2026-02-27T00:00:00.000Z', '2026-03-02T00:00:00.000Z']);
    assert.deepEqual(range('2026-03-01,2026-03-01'), ['2026-03-01T00:00:00.000Z', '2026-03-02T00:00:00.000Z']);
  });

  it('begins days at midnight in tz, which is another instant than in UTC', () => {
    assert.deepEqual(range('2026-03-01', 'Asia/Tokyo'), ['2026-02-28T15:00:00.000Z', '2026-03-01T15:00:00.000Z']);
    assert.deepEqual(range('2026-03-01', 'America/New_York'), ['2026-03-01T05:00:00.000Z', '2026-03-02T05:00:00.000Z']);
    // The day DST starts in New York has 23 hours.
    assert.deepEqual(range('2026-03-08', 'America/New_York'), ['2026-03-08T05:00:00.000Z', '2026-03-09T04:00:00.000Z']);
    // Where midnight does not exist (Santiago moves 00:00 → 01:00 in September), the day begins at 01:00.
    assert.deepEqual(range('2026-09-06', 'America/Santiago'), ['2026-09-06T04:00:00.000Z', '2026-09-07T03:00:00.000Z']);
  });

  it('reads presets as whole days ending today in tz', () => {
    assert.deepEqual(range('today'), ['2026-03-15T00:00:00.000Z', '2026-03-16T00:00:00.000Z']);
    assert.deepEqual(range('7d'), ['2026-03-09T00:00:00.000Z', '2026-03-16T00:00:00.000Z']);
    assert.deepEqual(range('30d'), ['2026-02-14T00:00:00.000Z', '2026-03-16T00:00:00.000Z']);
    assert.deepEqual(range('90d'), ['2025-12-16T00:00:00.000Z', '2026-03-16T00:00:00.000Z']);
    assert.deepEqual(range('12mo'), ['2025-03-16T00:00:00.000Z', '2026-03-16T00:00:00.000Z']);
    // 10:00 UTC is already the next day in Auckland (UTC+13).
    assert.deepEqual(range('today', 'Pacific/Auckland', new Date('2026-03-15T12:00:00Z')), ['2026-03-15T11:00:00.000Z', '2026-03-16T11:00:00.000Z']);
    assert.deepEqual(range('all'), [null, null]);
    assert.deepEqual(range(undefined), [null, null]);
  });

  it('refuses anything else with a 422 naming the accepted forms, never correcting it', () => {
    for (const bad of ['2026-02-30', '2026-3-1', '2026-03-01,', '2026-03-01,2026-03-02,2026-03-03', 'yesterday', '14d', '2026-03-01T00:00:00Z', '1969-12-31']) {
      const error = refusal(bad);
      assert.equal(error.status, 422, bad);
      assert.match(error.details.date![0]!, /YYYY-MM-DD,YYYY-MM-DD/, bad);
    }
    assert.match(refusal('2026-03-02,2026-03-01').details.date![0]!, /after the last/);
    assert.equal(refusal('today', 'Mars/Olympus').details.tz!.length, 1);
  });
});
