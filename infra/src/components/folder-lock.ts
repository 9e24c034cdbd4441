import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { InfraError } from '../errors.ts';

export interface FolderLockOptions {
  /** What the lock guards, in the message of a wait that ran out. */
  readonly what: string;
  /** Longest wait for another process to let go. */
  readonly timeoutMs: number;
  /** How often a waiter looks again. */
  readonly intervalMs?: number;
}

/** A lock folder is this old without its owner's pid only when the owner died creating it. */
const UNOWNED_GRACE_MS = 10_000;

/** Blocks this thread for `ms`: the callers are synchronous (they go on to spawnSync). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, owned by another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when the holder of `lockDir` is gone: its process died, or it died before saying who it is. */
function abandoned(lockDir: string): boolean {
  try {
    const pid = Number(readFileSync(path.join(lockDir, 'pid'), 'utf8'));
    return Number.isInteger(pid) && pid > 0 && !processAlive(pid);
  } catch {
    try {
      return Date.now() - statSync(lockDir).mtimeMs > UNOWNED_GRACE_MS;
    } catch {
      return false; // released meanwhile
    }
  }
}

/**
 * Runs `work` while this process holds `lockDir`, a folder whose creation is the lock (mkdir is
 * atomic on every file system here): stages of one test run that start the same server at once
 * must not both write its jars (a jar copied while the other Maven was still downloading it is
 * cut short). Another process's lock is waited for; one whose process died is taken over.
 */
export function withFolderLock<T>(lockDir: string, options: FolderLockOptions, work: () => T): T {
  mkdirSync(path.dirname(lockDir), { recursive: true });
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    try {
      mkdirSync(lockDir);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (abandoned(lockDir)) {
      // Moved aside rather than deleted in place, so that two waiters that both found it
      // abandoned cannot both delete: only one rename of this path succeeds.
      try {
        const aside = `${lockDir}.abandoned-${process.pid}`;
        renameSync(lockDir, aside);
        rmSync(aside, { recursive: true, force: true });
      } catch {
        // Another waiter took it over first.
      }
      continue;
    }
    if (Date.now() >= deadline) {
      throw new InfraError(
        'LOCK_TIMEOUT',
        `waited ${options.timeoutMs} ms for another process to finish ${options.what}`,
        { hint: `if no such process runs, delete ${lockDir}` },
      );
    }
    sleepSync(options.intervalMs ?? 250);
  }
  try {
    writeFileSync(path.join(lockDir, 'pid'), String(process.pid));
    return work();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}
