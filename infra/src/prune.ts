import { lstatSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { PGBOUNCER_COMPONENT } from './components/pgbouncer.ts';
import { controlsFor } from './component-driver.ts';
import { isAlive } from './process/process-identity.ts';
import { listStackNames, readState, stackDir, type StackState } from './state-file.ts';

/** A stack's folder that `prune` removed, and the space that gave back. */
export interface PrunedStack {
  readonly name: string;
  readonly bytes: number;
}

/**
 * A state file written this recently may belong to a detached stack whose servers are still
 * starting (nothing runs yet, and no owner is recorded): leave it for the next prune.
 */
const settlingMs = 60_000;

/**
 * Whether anything of the stack may still be in use: its owner process lives, or one of the
 * servers or roles this machine runs for it does. External servers are someone else's and
 * say nothing about the stack.
 */
export function stackInUse(state: StackState, env: NodeJS.ProcessEnv): boolean {
  if (state.ownerPid !== undefined && isAlive({ pid: state.ownerPid, startTime: undefined }))
    return true;
  return Object.values(state.components).some(
    (record) => record.kind !== 'external' && controlsFor(record).status(env).running,
  );
}

/** Stacks that `prune` would remove now: not in use, and not just created. */
export function leftoverStacks(env: NodeJS.ProcessEnv, now = Date.now()): string[] {
  return listStackNames(env).filter((name) => {
    const state = readState(name, env);
    if (!state || stackInUse(state, env)) return false;
    const written = statSync(path.join(stackDir(name, env), 'state.json')).mtimeMs;
    return now - written >= settlingMs;
  });
}

/** The folders a stack's files live in: its own, and PostgreSQL's when it lives elsewhere. */
export function stackFolders(state: StackState, env: NodeJS.ProcessEnv): string[] {
  const dir = stackDir(state.name, env);
  const inside = (folder: string) => folder.startsWith(`${dir}${path.sep}`);
  const outside = Object.values(state.components).flatMap((record) => {
    if ((record.kind === 'postgres' || record.kind === 'kafka') && !inside(record.dataDir))
      return [path.dirname(record.dataDir)];
    // PgBouncer's config moves out with PostgreSQL's data, for the same reason (definePgBouncer).
    if (
      record.name === PGBOUNCER_COMPONENT &&
      record.kind === 'process' &&
      !inside(record.launch.cwd)
    )
      return [record.launch.cwd];
    return [];
  });
  return [dir, ...outside];
}

/** Bytes of the files under `target` (symbolic links counted, not followed); 0 when it is gone. */
export function folderBytes(target: string): number {
  let stats;
  try {
    stats = lstatSync(target);
  } catch {
    return 0;
  }
  if (!stats.isDirectory()) return stats.size;
  return readdirSync(target).reduce(
    (total, entry) => total + folderBytes(path.join(target, entry)),
    0,
  );
}

/** `123.4 MB`: sizes for people. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  return `${(bytes / 1024 / 1024 / 1024).toFixed(2)} GB`;
}
