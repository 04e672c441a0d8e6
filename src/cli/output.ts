/** A plain aligned table for humans; --json is there for scripts. */
export function printTable(rows: Record<string, unknown>[], columns: string[]): void {
  if (rows.length === 0) {
    process.stdout.write('(none)\n');
    return;
  }
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  process.stdout.write(`${line(columns.map((c) => c.toUpperCase()))}\n${rows.map((r) => line(columns.map((c) => cell(r[c])))).join('\n')}\n`);
}
