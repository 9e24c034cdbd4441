/** What a scenario hands back: tables for the console and the markdown, and target verdicts. */
export interface Table {
  readonly caption?: string;
  readonly headers: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

export interface Target {
  readonly name: string;
  readonly goal: string;
  readonly measured: string;
  readonly met: boolean;
}

export interface Section {
  readonly id: string;
  readonly title: string;
  readonly tables: readonly Table[];
  readonly notes: readonly string[];
  readonly targets: readonly Target[];
}

/** A fixed-width text table for the terminal. */
export function textTable(table: Table): string {
  const widths = table.headers.map((header, i) =>
    Math.max(header.length, ...table.rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ');
  return [
    ...(table.caption ? [table.caption] : []),
    line(table.headers),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...table.rows.map(line),
  ].join('\n');
}

export function markdownTable(table: Table): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [
    ...(table.caption ? [`${table.caption}`, ''] : []),
    line(table.headers),
    line(table.headers.map(() => '---')),
    ...table.rows.map(line),
  ].join('\n');
}

export function targetsTable(targets: readonly Target[]): Table {
  return {
    headers: ['target', 'goal', 'measured', 'met'],
    rows: targets.map((t) => [t.name, t.goal, t.measured, t.met ? 'yes' : '**no**']),
  };
}
