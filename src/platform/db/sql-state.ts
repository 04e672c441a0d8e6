/**
 * The SQLSTATE of a database error, wherever the driver put it: node-postgres
 * and PGlite set `code` on their error, and Drizzle wraps that error as the
 * `cause` of its own. Services branch on a few of these states to answer a
 * race as the 4xx it is (a row deleted or taken meanwhile) instead of a 500.
 */
export const SQL_STATE = {
  foreignKeyViolation: '23503',
  uniqueViolation: '23505',
  queryCanceled: '57014',
} as const;

export function sqlStateOf(error: unknown): string | undefined {
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && typeof e === 'object' && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
  }
  return undefined;
}
