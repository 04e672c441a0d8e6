/**
 * Reading a pasted list or a CSV file of addresses and domains into rows
 * for POST /v1/subscribers/import, each with where it came from ("line 3",
 * "row 4"), so that the preview names the row a problem is on.
 */
import { csvParseRows } from 'd3-dsv';

export interface SourceRow {
  /** Where the value was: "Line 3", "Row 4". */
  where: string;
  value: string;
}

const HEADER = /^(e-?mail( address)?|address|domain|email or domain|e-mail or domain)$/i;

/** One value per line; a line may also hold several separated by commas or semicolons. Blank lines are skipped. */
export function rowsFromText(text: string): SourceRow[] {
  const rows: SourceRow[] = [];
  text.split(/\r\n|\r|\n/).forEach((line, index) => {
    for (const part of line.split(/[,;]/)) {
      const value = part.trim();
      if (value) rows.push({ where: `Line ${index + 1}`, value });
    }
  });
  return rows;
}

/**
 * A CSV file: the column headed "email" (or "e-mail", "address", "domain")
 * when the first row names one, else the first column. Row numbers are the
 * file's, header included, as a spreadsheet shows them.
 */
export function rowsFromCsv(text: string): SourceRow[] {
  const table = csvParseRows(text.replace(/^\uFEFF/, ''));
  if (table.length === 0) return [];
  const headerColumn = table[0]!.findIndex((cell) => HEADER.test(cell.trim()));
  const column = headerColumn >= 0 ? headerColumn : 0;
  const rows: SourceRow[] = [];
  table.forEach((cells, index) => {
    if (index === 0 && headerColumn >= 0) return;
    const value = (cells[column] ?? '').trim();
    if (value) rows.push({ where: `Row ${index + 1}`, value });
  });
  return rows;
}
