/**
 * Cursor (keyset) pagination shared by every list: the order is the sort key
 * then the id, both in the sort's direction, and a cursor holds the last row's
 * (key, id). Rows inserted between two pages land before or after the cursor,
 * so a page never skips or repeats a row, whatever the sort.
 *
 * Cursors are opaque to clients (base64url JSON bound to the sort they were
 * made for); a malformed or mismatched cursor is a 422 on `cursor`. A cursor
 * is client input: its value must fit the sort's SQL type (a safe integer, a
 * valid timestamp, text without NUL) and its id a bigint, or the comparison
 * would fail in the database instead.
 */
import { asc, desc, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import { ERRORS } from '../errors.ts';
import { textProblem } from './input-guard.ts';

export type SortValue = string | number | null;

export interface KeysetSort {
  /** Name bound into cursors, so a cursor of one sort is refused by another. */
  name: string;
  /** The sort key; wrap nullable columns in coalesce() so the order is total. */
  key: SQL | AnyColumn;
  /** SQL type the cursor value is cast to when compared. */
  cast: 'text' | 'bigint' | 'timestamptz';
  direction: 'asc' | 'desc';
  id: AnyColumn;
  /** Reads the sort value of a result row, as stored in the cursor. */
  valueOf(row: Record<string, unknown>): SortValue;
}

interface CursorPayload {
  s: string;
  v: SortValue;
  i: number;
}

export function encodeCursor(sort: KeysetSort, row: Record<string, unknown>, id: number): string {
  const payload: CursorPayload = { s: sort.name, v: sort.valueOf(row), i: id };
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}:\d{2})$/;

/** Whether a cursor's sort value can be cast to the sort's SQL type. */
function fitsCast(cast: KeysetSort['cast'], value: unknown): boolean {
  if (value === null) return true;
  switch (cast) {
    case 'bigint':
      return Number.isSafeInteger(value) || (typeof value === 'string' && /^-?\d{1,15}$/.test(value));
    case 'timestamptz':
      return typeof value === 'string' && ISO_TIMESTAMP.test(value) && !Number.isNaN(Date.parse(value));
    case 'text':
      return typeof value === 'string' && value.length <= 1024 && textProblem(value) === null;
  }
}

export function decodeCursor(sort: KeysetSort, cursor: string | undefined): CursorPayload | null {
  if (!cursor) return null;
  try {
    const payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as CursorPayload;
    if (!payload || typeof payload !== 'object' || payload.s !== sort.name) throw new Error('mismatch');
    if (!Number.isSafeInteger(payload.i) || payload.i < 0) throw new Error('bad id');
    if (!fitsCast(sort.cast, payload.v)) throw new Error('bad value');
    return payload;
  } catch {
    throw ERRORS.validation({ cursor: ['The cursor is invalid or belongs to another sort; use meta.next_cursor of the previous page unchanged.'] });
  }
}

/** The WHERE condition that starts a page after the cursor. */
export function afterCursor(sort: KeysetSort, cursor: CursorPayload | null): SQL | undefined {
  if (!cursor) return undefined;
  const value = sql`cast(${cursor.v} as ${sql.raw(sort.cast)})`;
  const id = sql`cast(${cursor.i} as bigint)`;
  return sort.direction === 'asc' ? sql`(${sort.key}, ${sort.id}) > (${value}, ${id})` : sql`(${sort.key}, ${sort.id}) < (${value}, ${id})`;
}

export function orderOf(sort: KeysetSort): SQL[] {
  const dir = sort.direction === 'asc' ? asc : desc;
  return [dir(sort.key as AnyColumn), dir(sort.id)];
}

/**
 * Turns `limit + 1` fetched rows into a page: the extra row only tells that
 * there is more.
 */
export function toPage<T extends Record<string, unknown>>(sort: KeysetSort, rows: T[], limit: number, idOf: (row: T) => number): { rows: T[]; meta: { next_cursor: string | null; has_more: boolean } } {
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  return { rows: page, meta: { has_more: hasMore, next_cursor: hasMore && last ? encodeCursor(sort, last, idOf(last)) : null } };
}
