import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { InfraError } from '../errors.ts';
import { assertPortFree } from '../ports.ts';
import { pollUntil } from '../poll.ts';
import { isReady } from '../readiness.ts';
import type { LocalRecord } from '../component-record.ts';
import { launch } from './launch.ts';
import { isAlive, isGroupAlive, signalGroup, signalProcess } from './process-identity.ts';

const stopTimeoutMs = 30_000;
const killTimeoutMs = 10_000;

export function isRunning(record: LocalRecord): boolean {
  return record.process !== undefined && isAlive(record.process);
}

function logTail(logFile: string, lines = 15): string {
  try {
    return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

function prepareDataDir(record: LocalRecord): void {
  if (record.kind === 'process' || record.kind === 'connect') return;
  const { prepare, dataDir, launch: spec } = record;
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) return;
  const owner =
    prepare.uid === undefined ? undefined : { uid: prepare.uid, gid: prepare.gid ?? prepare.uid };
  for (const dir of [path.dirname(dataDir), dataDir]) {
    mkdirSync(dir, { recursive: true });
    if (owner) chownSync(dir, owner.uid, owner.gid);
  }
  const result = spawnSync(prepare.command, prepare.args, {
    cwd: spec.cwd,
    encoding: 'utf8',
    env: { ...process.env, ...spec.env },
    ...(owner ?? {}),
  });
  if (result.status !== 0) {
    const output =
      `${result.error?.message ?? ''}${result.stdout ?? ''}${result.stderr ?? ''}`.trim();
    throw new InfraError(
      'START_FAILED',
      `${record.name}: \`${path.basename(prepare.command)}\` failed: ${output.split('\n').slice(-3).join(' ')}`,
      {
        hint: owner
          ? `the data folder ${dataDir} must be reachable by uid ${owner.uid}; set STACK_HOME to a folder it can reach`
          : undefined,
      },
    );
  }
}

/**
 * Starts the component's process and waits until it serves. Data from an earlier run is kept:
 * the prepare step (initdb, Kafka storage format) only runs on an empty data folder.
 */
export async function startLocal<R extends LocalRecord>(record: R): Promise<R> {
  const spec = record.launch;
  if (isRunning(record)) return record;
  for (const [what, port] of Object.entries(record.ports)) {
    await assertPortFree(
      port,
      `${record.name} (${what})`,
      `STACK_${record.name.toUpperCase().replaceAll('-', '_')}_PORT`,
    );
  }
  prepareDataDir(record);
  const identity = await launch(spec);
  let exited = false;
  let failure: unknown;
  try {
    await pollUntil(
      async () => {
        // A process that died will never serve: stop waiting at once (a throw here would
        // only be remembered by pollUntil, which would keep polling until the timeout).
        if (!isAlive(identity)) return (exited = true);
        return isReady(record.readiness);
      },
      {
        timeoutMs: record.readyTimeoutMs,
        intervalMs: 200,
        description: `${record.name} to become ready`,
      },
    );
  } catch (error) {
    failure = error;
  }
  if (exited || failure !== undefined) {
    // Asked before the SIGKILL below, which would make every process look as if it had exited.
    const died = exited || !isAlive(identity);
    signalGroup(identity, 'SIGKILL');
    throw new InfraError(
      'NOT_READY',
      `${record.name} ${died ? 'exited during start-up' : `did not become ready within ${record.readyTimeoutMs / 1000} s`}` +
        `\n--- last lines of ${spec.logFile} ---\n${logTail(spec.logFile)}`,
      {
        logFile: spec.logFile,
        hint: `read the log: pnpm stack logs ${record.name}`,
        cause: failure,
      },
    );
  }
  return { ...record, process: identity };
}

/** Graceful stop with the component's own signal; SIGKILL if it does not finish in time. */
export async function stopLocal<R extends LocalRecord>(record: R): Promise<R> {
  const identity = record.process;
  if (!identity) return record;
  signalProcess(identity, record.stopSignal);
  try {
    await pollUntil(() => !isGroupAlive(identity), {
      timeoutMs: stopTimeoutMs,
      description: `${record.name} to stop`,
    });
  } catch {
    return killLocal(record);
  }
  return { ...record, process: undefined };
}

/** SIGKILL to the whole process group, as a crash would: no shutdown hooks, no flush. */
export async function killLocal<R extends LocalRecord>(record: R): Promise<R> {
  const identity = record.process;
  if (!identity) return record;
  signalGroup(identity, 'SIGKILL');
  await pollUntil(() => !isGroupAlive(identity), {
    timeoutMs: killTimeoutMs,
    description: `${record.name} to die`,
  });
  return { ...record, process: undefined };
}
