/**
 * CSV cells formatted by the database, as text: the large exports select
 * their rows through these, and the same select is either streamed by COPY
 * (PostgreSQL) or read in batches and quoted by d3-dsv (PGlite, or when no
 * COPY slot is free). Both paths then write the same bytes by construction:
 * the quoting rules agree (a cell is quoted when it holds a comma, a double
 * quote, CR or LF), and the one difference, COPY quoting an empty string to
 * tell it from NULL, is removed by writing empty text as NULL (d3-dsv writes
 * both as an empty cell).
 */
import { sql, type SQL } from 'drizzle-orm';

/** Text as is; empty text as NULL (an empty cell either way). */
export const textCell = (value: SQL): SQL => sql`nullif(${value}, '')`;

/**
 * Text someone outside the service typed: a leading = + - @ tab or CR gets a
 * `'` (formula injection), as safeText in csv.ts does.
 */
export const typedTextCell = (value: SQL): SQL =>
  // ascii(): the first character's code without taking a substring (= + - @ tab CR); 0 for empty text.
  sql`nullif(case when ascii(${value}) in (61, 43, 45, 64, 9, 13) then '''' || ${value} else ${value} end, '')`;

/** An integer or bigint (PostgreSQL's digits are JavaScript's). */
export const integerCell = (value: SQL): SQL => sql`${value}::text`;

/**
 * A double precision number: PostgreSQL's shortest exact form, the digits
 * JavaScript prints (only magnitudes below 1e-4 or from 1e15 differ, in
 * e-notation, and coordinates have at most four decimals).
 */
export const doubleCell = (value: SQL): SQL => sql`${value}::text`;

/** ISO 8601 UTC with milliseconds (cut, not rounded, as before), like Date.toISOString. */
export const isoCell = (value: SQL): SQL => sql`to_char(${value} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Milliseconds as seconds with millisecond precision, printed as JavaScript prints the number (4, 4.5, 0.001). */
export const secondsCell = (ms: SQL): SQL => sql`trim_scale(${ms}::numeric / 1000)::text`;

/**
 * jsonb as PostgreSQL writes it (keys in jsonb's order, `": "` and `", "`
 * between items), defused like typed text; a JSON null is an empty cell.
 * A JSON string at the top level (the audit log's free-text metadata) is
 * written unquoted. (Objects and arrays start with { or [: nothing to defuse.)
 */
export const jsonCell = (value: SQL): SQL => sql`case jsonb_typeof(${value})
  when 'array' then ${value}::text when 'object' then ${value}::text when 'null' then null
  when 'string' then ${typedTextCell(sql`(${value} #>> '{}')`)} else ${typedTextCell(sql`${value}::text`)} end`;
