/**
 * CSV as spreadsheets read it: RFC 4180 quoting by csv-stringify, CRLF line
 * ends, UTF-8 with a byte-order mark by default (Excel then reads non-ASCII
 * names correctly), and text typed by readers or customers defused against
 * formula injection (OWASP "CSV injection": a cell starting with = + - @,
 * a tab or a carriage return is prefixed with a single quote, so a
 * spreadsheet shows it as text instead of evaluating it).
 */
import { Readable } from 'node:stream';
import { stringify, type Stringifier } from 'csv-stringify';

export type Cell = string | number | boolean | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;

/** A text cell someone outside the service could have typed (emails, names, hosts, metadata). */
export function safeText(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/** JSON of a metadata value, defused like any typed text. */
export function safeJson(value: unknown): string | null {
  return value === null || value === undefined ? null : safeText(JSON.stringify(value));
}

export interface CsvExport {
  /** ASCII file name, for Content-Disposition. */
  filename: string;
  /** The header row. */
  columns: readonly string[];
  /** Rows in batches from the database; stopping the iteration stops the reads. */
  rows(): AsyncGenerator<Cell[]>;
}

/** Streams an export as CSV; destroying the returned stream (a client gone) ends the row generator. */
export function csvStream(csv: CsvExport, options: { bom: boolean }): Stringifier {
  const out = stringify({
    bom: options.bom,
    header: true,
    columns: [...csv.columns],
    record_delimiter: '\r\n',
    cast: { boolean: (value) => (value ? 'true' : 'false') },
  });
  const source = Readable.from(csv.rows(), { objectMode: true });
  source.on('error', (error) => out.destroy(error));
  out.on('close', () => source.destroy());
  source.pipe(out);
  return out;
}
