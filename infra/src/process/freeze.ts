import { readdirSync, readFileSync } from 'node:fs';
import { InfraError } from '../errors.ts';
import type { ComponentRecord, LocalRecord } from '../component-record.ts';
import { isAlive, signalGroup, type ProcessIdentity } from './process-identity.ts';

/** Parent pid by pid, from /proc (empty where there is none). */
function parentsByPid(): Map<number, number> {
  const parents = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return parents;
  }
  for (const entry of entries) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // Gone since the listing.
    }
  }
  return parents;
}

/** Every descendant of `pid`, parents before children. */
function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const [child, parent] of parentsByPid()) {
    children.set(parent, [...(children.get(parent) ?? []), child]);
  }
  const found: number[] = [];
  const queue = [...(children.get(pid) ?? [])];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    found.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return found;
}

/**
 * The signal to the component's process group and to every descendant: PostgreSQL's backends
 * leave the postmaster's group (each calls setsid), and a freeze must reach them too.
 */
function signalTree(identity: ProcessIdentity, signal: 'SIGSTOP' | 'SIGCONT'): void {
  signalGroup(identity, signal);
  for (const pid of descendantsOf(identity.pid)) {
    try {
      process.kill(pid, signal);
    } catch {
      // Exited meanwhile.
    }
  }
}

/**
 * A frozen process, as a gray failure looks: alive, holding its connections, locks and
 * sessions, answering nothing. Only the local provider runs the processes it could freeze.
 */
function frozenTarget(record: ComponentRecord, action: 'pause' | 'resume'): LocalRecord {
  if (record.kind === 'container' || record.kind === 'external') {
    throw new InfraError('UNSUPPORTED', `${record.name}: ${action} needs the local provider`, {
      hint: 'SIGSTOP/SIGCONT reach processes of this machine; run the stack with STACK_PROVIDER=local',
    });
  }
  return record;
}

/** SIGSTOP to the component's process group and its descendants (every postgres backend). */
export function pauseLocal(record: ComponentRecord): ComponentRecord {
  const target = frozenTarget(record, 'pause');
  if (target.process === undefined || !isAlive(target.process)) {
    throw new InfraError('UNSUPPORTED', `${record.name} is not running: nothing to pause`, {
      hint: `start it first: pnpm stack start ${record.name}`,
    });
  }
  // The parent first: a stopped postmaster forks no backend the walk would miss.
  signalTree(target.process, 'SIGSTOP');
  return { ...target, pausedAt: target.pausedAt ?? new Date().toISOString() };
}

/**
 * SIGCONT to the group: the processes go on where they stopped, their timers long overdue.
 * Harmless on a process that runs (or that froze itself, which the stack never recorded).
 */
export function resumeLocal(record: ComponentRecord): ComponentRecord {
  const target = frozenTarget(record, 'resume');
  if (target.process !== undefined) signalTree(target.process, 'SIGCONT');
  return { ...target, pausedAt: undefined };
}
