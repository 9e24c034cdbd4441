import pg from 'pg';
import { ConfigError } from '../config/env-reader.ts';

/**
 * SQLSTATEs of a login PostgreSQL refuses: a wrong password (28P01), or a login it does not
 * know or may not let in here (28000, `pg_hba.conf`). Neither heals by retrying.
 */
const LOGIN_REFUSED = new Set(['28P01', '28000']);

/** The server's refusal of this login, or undefined when `error` is anything else. */
export function loginRefusal(error: unknown): string | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; depth += 1) {
    const code = 'code' in cause ? cause.code : undefined;
    if (typeof code === 'string' && LOGIN_REFUSED.has(code)) return cause.message;
    cause = cause.cause;
  }
  return undefined;
}

/** `login@host:port/database` of a connection string: where a refusal happened, no password. */
function loginPlace(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const login = decodeURIComponent(url.username) || '(the default login)';
  return `"${login}" at ${url.host}${url.pathname}`;
}

/**
 * Tries one connection as the process will: a refused login ends the start with a message that
 * names the role and the server (a wrong password does not heal by retrying, and every worker
 * would only log the same refusal for ever). A server that cannot be reached is not checked
 * here: the roles start and wait for it, as they do when it goes away later.
 */
export async function checkLogin(databaseUrl: string, roleName: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (error) {
    const refusal = loginRefusal(error);
    if (refusal !== undefined) {
      throw new ConfigError(
        'DATABASE_URL',
        `is refused: ${roleName} cannot log in to PostgreSQL as ${loginPlace(databaseUrl)}: ${refusal} (check the URL's login and password, and that migrate created that login)`,
      );
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}
