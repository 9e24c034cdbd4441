/** Where a command writes: standard output for results, standard error for diagnostics. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

/** A value as a table cell: dates in ISO form, nothing as `-`. */
function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'number' && !Number.isInteger(value)) return value.toFixed(1);
  return String(value).replaceAll(/[\r\n\t]/g, ' ');
}

/** Rows as a table with a header line, columns padded to their widest cell. */
export function formatTable<Row extends object>(
  rows: readonly Row[],
  columns: readonly (keyof Row & string)[],
): string[] {
  const cells = rows.map((row) => {
    const values = new Map<string, unknown>(Object.entries(row));
    return columns.map((column) => cell(values.get(column)));
  });
  const widths = columns.map((column, i) =>
    Math.max(column.length, ...cells.map((line) => (line[i] ?? '').length)),
  );
  const line = (values: readonly string[]): string =>
    values
      .map((value, i) => value.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(columns), ...cells.map(line)];
}

/** Prints `value` as JSON (`--json`) or as the table of `rows`. */
export function printRows<Row extends object>(
  io: CliIo,
  json: boolean,
  rows: readonly Row[],
  columns: readonly (keyof Row & string)[],
  empty: string,
): void {
  if (json) io.out(JSON.stringify(rows, null, 2));
  else if (rows.length === 0) io.out(empty);
  else for (const line of formatTable(rows, columns)) io.out(line);
}
