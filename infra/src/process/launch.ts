import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { InfraError } from '../errors.ts';
import { identify, type ProcessIdentity } from './process-identity.ts';

/** Everything needed to start a component again from another shell: it lives in the state file. */
export interface LaunchSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly logFile: string;
  /** Run as this uid/gid (PostgreSQL refuses to run as root). */
  readonly uid?: number | undefined;
  readonly gid?: number | undefined;
}

/**
 * Starts the process detached in its own process group, output appended to its log file, so
 * it outlives the shell that started it and can be SIGKILLed as a group.
 */
export async function launch(spec: LaunchSpec): Promise<ProcessIdentity> {
  mkdirSync(path.dirname(spec.logFile), { recursive: true });
  const logFd = openSync(spec.logFile, 'a');
  try {
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: { ...process.env, ...spec.env },
      detached: true,
      stdio: ['ignore', logFd, logFd],
      ...(spec.uid === undefined ? {} : { uid: spec.uid }),
      ...(spec.gid === undefined ? {} : { gid: spec.gid }),
    });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => resolve(child.pid ?? -1));
    });
    child.unref();
    return identify(pid);
  } catch (error) {
    throw new InfraError('START_FAILED', `could not start ${spec.command}: ${String(error)}`, {
      logFile: spec.logFile,
      cause: error,
    });
  } finally {
    closeSync(logFd);
  }
}
