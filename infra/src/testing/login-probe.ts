import pg from 'pg';

/** What PostgreSQL said to a statement a login sent: done, or refused with its code. */
export type LoginProbe =
  | { readonly done: true }
  | { readonly done: false; readonly code: string; readonly message: string };

/** `databaseUrl` with `login` as its user and no password (the server's authentication decides). */
export function urlAsLogin(databaseUrl: string, login: string): string {
  const url = new URL(databaseUrl);
  url.username = login;
  url.password = '';
  return url.toString();
}

/**
 * Sends `statement` as `login` inside a transaction that is rolled back, so a test can ask what a
 * role may do without changing anything: `{ done: true }`, or the error's SQLSTATE and message
 * (42501 for a privilege the login lacks).
 */
export async function probeAsLogin(
  databaseUrl: string,
  login: string,
  statement: string,
): Promise<LoginProbe> {
  const client = new pg.Client({ connectionString: urlAsLogin(databaseUrl, login) });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(statement);
    return { done: true };
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    return { done: false, code: String(code), message: String(message) };
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    await client.end();
  }
}
