import { readFileSync, writeFileSync } from 'node:fs';
import pg from 'pg';

const PRIVILEGES = ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] as const;
/** Any other privilege (TRUNCATE, REFERENCES, TRIGGER): a `GRANT ALL` shows here. */
const OTHER = 'other';

/** One row of a grants table: a login, a table, and per privilege what it covers. */
type GrantRow = readonly [login: string, table: string, ...cells: string[]];

/**
 * What each of `logins` may do on the tables of the database at `databaseUrl`, as PostgreSQL
 * holds it (its catalogs, not the declarations that asked for it): one row per login and
 * table, and per privilege `all` (the whole table), the columns, or `–`; any other privilege
 * in the last cell. Sorted by login, then table. Ownership is not listed: these are grants.
 */
export async function readGrants(
  databaseUrl: string,
  logins: readonly string[],
): Promise<GrantRow[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{
      login: string;
      table: string;
      privilege: string;
      columns: string[] | null;
    }>(
      // From the catalogs, not information_schema: that leaves out system columns (retention
      // is granted ctid). A column's ACL holds its column grants only, never the table's.
      `SELECT r.rolname AS login, c.relname AS table, a.privilege_type AS privilege,
              NULL::text[] AS columns
         FROM pg_class c
        CROSS JOIN LATERAL aclexplode(c.relacl) a
         JOIN pg_roles r ON r.oid = a.grantee
        WHERE c.relnamespace = current_schema()::regnamespace AND r.rolname = ANY($1)
       UNION ALL
       SELECT r.rolname, c.relname, a.privilege_type,
              array_agg(att.attname::text ORDER BY att.attnum)
         FROM pg_class c
         JOIN pg_attribute att ON att.attrelid = c.oid AND NOT att.attisdropped
        CROSS JOIN LATERAL aclexplode(att.attacl) a
         JOIN pg_roles r ON r.oid = a.grantee
        WHERE c.relnamespace = current_schema()::regnamespace AND r.rolname = ANY($1)
        GROUP BY 1, 2, 3
        ORDER BY 1, 2, 3`,
      [logins],
    );
    const byRow = new Map<string, { login: string; table: string; cells: Map<string, string> }>();
    for (const row of rows) {
      const key = `${row.login}\u0000${row.table}`;
      const entry = byRow.get(key) ?? { login: row.login, table: row.table, cells: new Map() };
      const { cells } = entry;
      const covers = row.columns === null ? 'all' : row.columns.join(', ');
      if ((PRIVILEGES as readonly string[]).includes(row.privilege)) {
        cells.set(row.privilege, covers);
      } else {
        const other = cells.get(OTHER);
        cells.set(OTHER, `${other === undefined ? '' : `${other}; `}${row.privilege} ${covers}`);
      }
      byRow.set(key, entry);
    }
    return [...byRow.values()]
      .map(({ login, table, cells }): GrantRow => [
        login,
        table,
        ...[...PRIVILEGES, OTHER].map((privilege) => cells.get(privilege) ?? '–'),
      ])
      .sort((a, b) => a[0].localeCompare(b[0]) || a[1].localeCompare(b[1]));
  } finally {
    await client.end();
  }
}

/** The grants as a markdown table (its columns padded by the formatter, not here). */
export function grantsMarkdown(grants: readonly GrantRow[]): string {
  const header = ['login', 'table', ...PRIVILEGES, OTHER];
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...grants.map(
      (row) => `| ${row.map((cell, i) => (i < 2 ? `\`${cell}\`` : cell)).join(' | ')} |`,
    ),
  ].join('\n');
}

/** The rows of a markdown table's body, each cell trimmed and unquoted: padding does not count. */
function tableRows(markdown: string): string[][] {
  return markdown
    .split('\n')
    .filter((line) => line.trim().startsWith('|'))
    .slice(2)
    .map((line) =>
      line
        .trim()
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim().replaceAll('`', '')),
    );
}

/**
 * Checks the grants table of `docs` between `<!-- grants:<name> -->` and `<!-- /grants:<name> -->`
 * against `grants`: undefined when they agree, else what to do. With `write`, rewrites the
 * block instead (run the formatter on the document after).
 */
export function checkGrantsBlock(
  docPath: string,
  name: string,
  grants: readonly GrantRow[],
  options: { write: boolean },
): string | undefined {
  const text = readFileSync(docPath, 'utf8');
  const open = `<!-- grants:${name} -->`;
  const close = `<!-- /grants:${name} -->`;
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start < 0 || end < start) return `${docPath} has no ${open} … ${close} block`;
  const block = text.slice(start + open.length, end);
  if (JSON.stringify(tableRows(block)) === JSON.stringify(grants)) return undefined;
  if (options.write) {
    const table = `\n\n${grantsMarkdown(grants)}\n\n`;
    writeFileSync(docPath, text.slice(0, start + open.length) + table + text.slice(end));
    return undefined;
  }
  return `${docPath}'s ${name} grants table differs from the database's; to rewrite it, run this test with WRITE_GRANTS_TABLE=1, then \`pnpm format\`. The database says:\n${grantsMarkdown(grants)}`;
}
