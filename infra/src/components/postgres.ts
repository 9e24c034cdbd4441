import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InfraError } from '../errors.ts';
import type { PostgresRecord } from '../component-record.ts';

/** The server settings of every PostgreSQL a stack runs, on this machine or in a container. */
export const postgresServerSettings: Readonly<Record<string, string>> = Object.freeze({
  max_connections: '300',
  // Tests kill processes, not the machine: the kernel keeps written pages, so fsync buys
  // nothing here and costs a lot. synchronous_commit stays on: a commit is in the WAL.
  fsync: 'off',
  full_page_writes: 'off',
  shared_buffers: '256MB',
  // The CDC relay (Debezium) decodes the WAL through a replication slot per service database.
  wal_level: 'logical',
  max_replication_slots: '20',
  max_wal_senders: '20',
});

/** What a `durable` stack puts back: a production server's crash safety, for benchmarks. */
const durablePostgresSettings: Readonly<Record<string, string>> = Object.freeze({
  fsync: 'on',
  full_page_writes: 'on',
  // The bench counts statements per role (B10); a library only the server's start can load.
  shared_preload_libraries: 'pg_stat_statements',
});

/** The server settings of a stack's PostgreSQL, durable or as tests run it. */
export function postgresSettings(durable: boolean): Readonly<Record<string, string>> {
  return { ...postgresServerSettings, ...(durable ? durablePostgresSettings : {}) };
}

/** Settings as `postgres` arguments: `-c name=value` each. */
export function postgresSettingArgs(settings: Readonly<Record<string, string>>): string[] {
  return Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
}

/** PG_BINDIR, else `pg_config --bindir`, else the newest /usr/lib/postgresql/<v>/bin. */
export function findPostgresBinaries(env: NodeJS.ProcessEnv = process.env): string {
  const candidates: string[] = [];
  const explicit = env['PG_BINDIR'];
  if (explicit) {
    if (existsSync(path.join(explicit, 'initdb')) && existsSync(path.join(explicit, 'postgres')))
      return explicit;
    throw new InfraError('POSTGRES_MISSING', `PG_BINDIR=${explicit} has no initdb and postgres`, {
      hint: 'point PG_BINDIR at the folder with the server binaries (`pg_config --bindir`), or unset it',
    });
  }
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim());
  } catch {
    // pg_config is in the client package; the server may be installed without it.
  }
  const debianRoot = '/usr/lib/postgresql';
  if (existsSync(debianRoot)) {
    const versions = readdirSync(debianRoot).sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => path.join(debianRoot, version, 'bin')));
  }
  const found = candidates.find(
    (dir) => existsSync(path.join(dir, 'initdb')) && existsSync(path.join(dir, 'postgres')),
  );
  if (!found) {
    throw new InfraError(
      'POSTGRES_MISSING',
      'PostgreSQL server binaries (initdb, postgres) not found',
      {
        hint: 'install them (Debian: `apt-get install postgresql`) or set PG_BINDIR to the folder that has initdb',
      },
    );
  }
  return found;
}

/** PostgreSQL refuses to run as root; as root we run it as the `postgres` system user. */
export function postgresRunAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new InfraError(
      'POSTGRES_MISSING',
      'running as root, and there is no `postgres` user to run PostgreSQL as',
      {
        hint: 'create one (`useradd --system postgres`) or run as an unprivileged user',
      },
    );
  }
}

export function definePostgres(options: {
  dir: string;
  port: number;
  binDir: string;
  durable?: boolean;
}): PostgresRecord {
  const { port, binDir } = options;
  const runAs = postgresRunAs();
  const dir = runAs ? reachableBy(runAs, options.dir) : options.dir;
  const dataDir = path.join(dir, 'data');
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    name: 'postgres',
    kind: 'postgres',
    dataDir,
    prepare: {
      command: path.join(binDir, 'initdb'),
      args: [
        '-D',
        dataDir,
        '-U',
        'postgres',
        '--auth=trust',
        '--encoding=UTF8',
        '--no-sync',
        '--no-instructions',
      ],
      uid: runAs?.uid,
      gid: runAs?.gid,
    },
    launch: {
      command: path.join(binDir, 'postgres'),
      args: [
        '-D',
        dataDir,
        '-p',
        String(port),
        '-k',
        dir,
        ...postgresSettingArgs({
          ...postgresSettings(options.durable ?? false),
          listen_addresses: '127.0.0.1',
          log_min_messages: 'warning',
        }),
      ],
      cwd: dir,
      env: { LC_ALL: 'C.UTF-8' },
      logFile: path.join(dir, 'postgres.log'),
      uid: runAs?.uid,
      gid: runAs?.gid,
    },
    readiness: { type: 'postgres', url },
    // Generous: on a shared two-core machine under a full suite, the first connection can wait.
    readyTimeoutMs: 60_000,
    stopSignal: 'SIGINT',
    endpoints: { url },
    ports: { postgres: port },
  };
}

/**
 * The folder PostgreSQL's data and socket (or PgBouncer's config) live in, as seen by the user
 * it runs as. A clone under a private folder (`mktemp -d`, /root) cannot be entered by that
 * user; its server then lives under the system temp folder instead, named after the stack's
 * own folder.
 */
export function reachableBy(user: { uid: number; gid: number }, dir: string): string {
  let existing = dir;
  while (!existsSync(existing)) existing = path.dirname(existing);
  // Folders created below `existing` get mode 755, so entering `existing` is what decides.
  const probe = spawnSync('test', ['-x', existing], { uid: user.uid, gid: user.gid });
  if (probe.status === 0) return dir;
  const id = createHash('sha256').update(dir).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), `outbox-inbox-postgres-${id}`);
}
