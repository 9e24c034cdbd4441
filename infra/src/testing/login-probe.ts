import pg from 'pg';
import { urlAsLogin } from '../login-url.ts';

/** What PostgreSQL said to a statement a login sent: done, or refused with its code. */
export type LoginProbe =
  | { readonly done: true }
  | { readonly done: false; readonly code: string; readonly message: string };

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

/** What a login must be allowed, and what it must be refused (statement, and the table named). */
export interface LoginAccessCase {
  readonly login: string;
  readonly allowed: readonly string[];
  readonly refused: readonly (readonly [statement: string, table: string])[];
}

/**
 * Probes every statement of `expected` as its login and describes each that went otherwise: an
 * allowed one refused, or a refused one done or refused by anything but PostgreSQL's
 * `permission denied for table <table>` (42501). Empty when the login's grants are exactly so.
 */
export async function accessMismatches(
  databaseUrl: string,
  expected: LoginAccessCase,
): Promise<string[]> {
  const mismatches: string[] = [];
  for (const statement of expected.allowed) {
    const probe = await probeAsLogin(databaseUrl, expected.login, statement);
    if (!probe.done) mismatches.push(`refused ${statement}: ${probe.code} ${probe.message}`);
  }
  for (const [statement, table] of expected.refused) {
    const probe = await probeAsLogin(databaseUrl, expected.login, statement);
    const denied = `permission denied for table ${table}`;
    if (probe.done) mismatches.push(`allowed ${statement}`);
    else if (probe.code !== '42501' || probe.message !== denied) {
      mismatches.push(`refused ${statement} otherwise: ${probe.code} ${probe.message}`);
    }
  }
  return mismatches;
}
