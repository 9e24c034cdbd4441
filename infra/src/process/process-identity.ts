import { readFileSync } from 'node:fs';

/**
 * A process as recorded in the state file. The start time (from /proc, where there is one)
 * keeps a recycled pid from being mistaken for our process, or killed.
 */
export interface ProcessIdentity {
  readonly pid: number;
  readonly startTime: string | undefined;
}

function procStat(pid: number): { state: string; startTime: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: parse after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const state = fields[0];
    const startTime = fields[19];
    if (state === undefined || startTime === undefined) return undefined;
    return { state, startTime };
  } catch {
    return undefined;
  }
}

export function identify(pid: number): ProcessIdentity {
  return { pid, startTime: procStat(pid)?.startTime };
}

/** Alive means: exists, is not a zombie, and is the same process we started. */
export function isAlive(identity: ProcessIdentity): boolean {
  const stat = procStat(identity.pid);
  if (stat) {
    if (stat.state === 'Z' || stat.state === 'X') return false;
    return identity.startTime === undefined || stat.startTime === identity.startTime;
  }
  try {
    process.kill(identity.pid, 0);
    return process.platform !== 'linux';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Sends a signal to the process group the component leads (postgres backends, the JVM). */
export function signalGroup(identity: ProcessIdentity, signal: NodeJS.Signals): void {
  if (!isAlive(identity)) return;
  try {
    process.kill(-identity.pid, signal);
  } catch {
    try {
      process.kill(identity.pid, signal);
    } catch {
      // Already gone between the check and the signal.
    }
  }
}

export function signalProcess(identity: ProcessIdentity, signal: NodeJS.Signals): void {
  if (!isAlive(identity)) return;
  try {
    process.kill(identity.pid, signal);
  } catch {
    // Already gone.
  }
}

/** True while any process of the group is still around (a killed postmaster's backends linger). */
export function isGroupAlive(identity: ProcessIdentity): boolean {
  if (isAlive(identity)) return true;
  try {
    process.kill(-identity.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
