/**
 * The analytics `date` parameter (its format is open in the spec): calendar
 * days in the caller's time zone, turned into one half-open UTC interval
 * [from, to) that every query and export applies to the event's own time.
 *
 *   YYYY-MM-DD              that day
 *   YYYY-MM-DD,YYYY-MM-DD   from the first day to the last, both included
 *   today                   today
 *   7d | 30d | 90d          the last 7, 30 or 90 days, today included
 *   12mo                    the day after the same date twelve months ago, through today
 *   all (or no `date`)      no bound
 *
 * Days begin at midnight in `tz` (an IANA name, default UTC), so a day in
 * Tokyo and the same day in UTC cover different instants. Anything else is a
 * 422 naming the accepted forms: a range is never widened or narrowed
 * silently (an impossible date such as 2026-02-30 or a reversed range is
 * refused, not corrected).
 */
import { ERRORS } from '../../platform/errors.ts';

export interface DateRange {
  /** Inclusive; null for no lower bound. */
  from: Date | null;
  /** Exclusive; null for no upper bound. */
  to: Date | null;
  /** The time zone the days were read in (to group by day in exports). */
  tz: string;
}

export const DATE_FORMS =
  'YYYY-MM-DD (one day), YYYY-MM-DD,YYYY-MM-DD (from the first day to the last, both included), today, 7d, 30d, 90d, 12mo or all';

export const DATE_DESCRIPTION =
  `Calendar days in \`tz\`: ${DATE_FORMS}. \`7d\`/\`30d\`/\`90d\` are the last N days with today; \`12mo\` runs from the day after the same date twelve months ago through today. ` +
  'Without `date`, all time. Anything else is a 422.';

export const TZ_DESCRIPTION = 'IANA time zone in which `date` days begin and end (e.g. `Europe/Paris`). Default `UTC`.';

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const PRESET_DAYS: Record<string, number> = { today: 1, '7d': 7, '30d': 30, '90d': 90 };

interface CivilDay {
  y: number;
  m: number;
  d: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    formatters.set(tz, f);
  }
  return f;
}

/** A valid IANA zone name (Intl knows it), canonical case kept as given. */
export function isTimeZone(tz: string): boolean {
  try {
    formatterFor(tz);
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock fields of an instant in a zone. */
function wallClock(instant: number, tz: string): { y: number; m: number; d: number; h: number; mi: number; s: number } {
  const parts = Object.fromEntries(formatterFor(tz).formatToParts(new Date(instant)).map((p) => [p.type, p.value]));
  return { y: Number(parts.year), m: Number(parts.month), d: Number(parts.day), h: Number(parts.hour), mi: Number(parts.minute), s: Number(parts.second) };
}

/** The zone's offset from UTC at an instant, in ms. */
function offsetAt(instant: number, tz: string): number {
  const w = wallClock(instant, tz);
  return Date.UTC(w.y, w.m - 1, w.d, w.h, w.mi, w.s) - Math.floor(instant / 1000) * 1000;
}

/** The instant a civil day begins in a zone (the first instant of that date, across DST changes). */
export function startOfDay(day: CivilDay, tz: string): Date {
  const wall = Date.UTC(day.y, day.m - 1, day.d);
  let instant = wall - offsetAt(wall, tz);
  instant = wall - offsetAt(instant, tz);
  // Where midnight does not exist (a DST jump at 00:00), the day starts at the first instant that has its date.
  const w = wallClock(instant, tz);
  if (Date.UTC(w.y, w.m - 1, w.d) < wall) instant += 3_600_000;
  return new Date(instant);
}

function addDays(day: CivilDay, days: number): CivilDay {
  const t = new Date(Date.UTC(day.y, day.m - 1, day.d + days));
  return { y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate() };
}

function addMonths(day: CivilDay, months: number): CivilDay {
  const t = new Date(Date.UTC(day.y, day.m - 1 + months, 1));
  const lastDay = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + 1, 0)).getUTCDate();
  return { y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: Math.min(day.d, lastDay) };
}

function parseDay(text: string): CivilDay | null {
  const match = DAY.exec(text);
  if (!match) return null;
  const day = { y: Number(match[1]), m: Number(match[2]), d: Number(match[3]) };
  const check = new Date(Date.UTC(day.y, day.m - 1, day.d));
  if (day.y < 1970 || check.getUTCFullYear() !== day.y || check.getUTCMonth() !== day.m - 1 || check.getUTCDate() !== day.d) return null;
  return day;
}

const compare = (a: CivilDay, b: CivilDay) => Date.UTC(a.y, a.m - 1, a.d) - Date.UTC(b.y, b.m - 1, b.d);

/** Parses `date` and `tz` (both optional) into a UTC interval; a 422 on the field at fault otherwise. */
export function parseDateRange(date: string | undefined, tz: string | undefined, now: Date = new Date()): DateRange {
  const zone = tz ?? 'UTC';
  if (!isTimeZone(zone)) throw ERRORS.validation({ tz: ['The tz must be an IANA time zone name such as UTC or Europe/Paris.'] });
  const value = date?.trim() ?? '';
  if (value === '' || value === 'all') return { from: null, to: null, tz: zone };

  const w = wallClock(now.getTime(), zone);
  const today: CivilDay = { y: w.y, m: w.m, d: w.d };
  const span = (first: CivilDay, last: CivilDay): DateRange => ({ from: startOfDay(first, zone), to: startOfDay(addDays(last, 1), zone), tz: zone });

  const presetDays = PRESET_DAYS[value];
  if (presetDays !== undefined) return span(addDays(today, 1 - presetDays), today);
  if (value === '12mo') return span(addDays(addMonths(today, -12), 1), today);

  const parts = value.split(',');
  const days = parts.map(parseDay);
  if (parts.length <= 2 && days.every((d) => d !== null)) {
    const first = days[0]!;
    const last = days[1] ?? first;
    if (compare(first, last) > 0) throw ERRORS.validation({ date: ['The first day of the range is after the last one.'] });
    return span(first, last);
  }
  throw ERRORS.validation({ date: [`The date must be one of: ${DATE_FORMS}.`] });
}
