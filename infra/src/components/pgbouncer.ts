import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { InfraError } from '../errors.ts';
import type { ProcessRecord } from '../component-record.ts';
import { postgresRunAs, reachableBy } from './postgres.ts';

/** The stack's component name of its PgBouncer. */
export const PGBOUNCER_COMPONENT = 'pgbouncer';

/** PGBOUNCER_BIN, else Debian's /usr/sbin/pgbouncer, else `pgbouncer` on PATH. */
export function findPgBouncer(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env['PGBOUNCER_BIN'];
  const candidates = explicit
    ? [explicit]
    : [
        '/usr/sbin/pgbouncer',
        ...(env['PATH'] ?? '').split(path.delimiter).map((dir) => path.join(dir, 'pgbouncer')),
      ];
  const found = candidates.find((candidate) => candidate !== '' && existsSync(candidate));
  if (found) return found;
  throw new InfraError(
    'PGBOUNCER_MISSING',
    explicit ? `PGBOUNCER_BIN=${explicit} does not exist` : 'pgbouncer not found',
    { hint: 'install it (Debian: `apt-get install pgbouncer`) or set PGBOUNCER_BIN' },
  );
}

export interface PgBouncerOptions {
  /** The stack's folder for it: its config and log. */
  readonly dir: string;
  readonly port: number;
  /** The PostgreSQL it pools, any database of it (`postgres://user@host:port/db`). */
  readonly postgresUrl: string;
  /** Server connections per database and user: what the pooler bounds. */
  readonly poolSize: number;
  readonly binary: string;
}

/**
 * PgBouncer in transaction mode in front of the stack's PostgreSQL, every database of it under
 * its own name: a server connection belongs to a client for one transaction only, so nothing
 * of a session (prepared statements, LISTEN, session advisory locks, SET) outlives one.
 * Writes its config files; the record runs it in the foreground like a role, so the stack
 * supervises its pid and its output goes to its log.
 */
export function definePgBouncer(options: PgBouncerOptions): ProcessRecord {
  const runAs = postgresRunAs();
  const dir = runAs ? reachableBy(runAs, options.dir) : options.dir;
  const server = new URL(options.postgresUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  mkdirSync(dir, { recursive: true });
  const authFile = path.join(dir, 'userlist.txt');
  // Trust auth, as the stack's PostgreSQL has; PgBouncer still wants the user listed.
  writeFileSync(authFile, `"${user}" ""\n`);
  const configFile = path.join(dir, 'pgbouncer.ini');
  writeFileSync(
    configFile,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${options.port}`,
      "unix_socket_dir = ''",
      'auth_type = trust',
      `auth_file = ${authFile}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.poolSize}`,
      'max_client_conn = 1000',
      'ignore_startup_parameters = extra_float_digits',
      // Its own connect/disconnect lines would drown the log under a suite's churn.
      'log_connections = 0',
      'log_disconnections = 0',
      '',
    ].join('\n'),
  );
  const url = `postgres://${encodeURIComponent(user)}@127.0.0.1:${options.port}/postgres`;
  return {
    name: PGBOUNCER_COMPONENT,
    kind: 'process',
    launch: {
      command: options.binary,
      args: [configFile],
      cwd: dir,
      env: {},
      logFile: path.join(dir, 'pgbouncer.log'),
      // It refuses to run as root, as PostgreSQL does.
      uid: runAs?.uid,
      gid: runAs?.gid,
    },
    readiness: { type: 'postgres', url },
    readyTimeoutMs: 30_000,
    // SIGINT waits for every client to leave; SIGTERM closes at once.
    stopSignal: 'SIGTERM',
    endpoints: { url },
    ports: { pgbouncer: options.port },
  };
}
