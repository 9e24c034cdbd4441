import { appendFileSync, writeSync } from 'node:fs';
import type { ServiceHooks } from '@outbox-inbox/service-kit';
import type { CounterValues } from '../process-counters.ts';
import { isArmed, takeArm } from './arming.ts';
import { chanceOf, timesOf, type FaultPlan } from './fault-plan.ts';
import { readInjectedFaults, type InjectedFault } from './injected-faults.ts';
import {
  isKillPointName,
  killPoints,
  type FaultMoment,
  type KillPointName,
} from './kill-points.ts';

interface FaultHookOptions {
  readonly component: string;
  readonly logFile: string | undefined;
  readonly random?: () => number;
  /** Reads the process's own counters before it kills itself (undefined when it cannot). */
  readonly lastCounters?: () => Promise<CounterValues | undefined>;
}

/** Whether the point used up its number of strikes (counted in the log, across restarts). */
function spent(point: KillPointName, times: number | undefined, logFile: string | undefined) {
  if (times === undefined || logFile === undefined) return false;
  return readInjectedFaults(logFile).filter((fault) => fault.point === point).length >= times;
}

/**
 * Whether the point strikes at this pass: by chance while strikes are left, or while (once)
 * the suite armed it.
 */
function strikes(
  point: KillPointName,
  rate: { chance: number; times: number | undefined },
  options: FaultHookOptions,
): boolean {
  const { effect, armed } = killPoints[point];
  if ((options.random ?? Math.random)() >= rate.chance) return false;
  if (spent(point, rate.times, options.logFile)) return false;
  if (!armed) return true;
  if (options.logFile === undefined) return false;
  return effect === 'freeze'
    ? takeArm(options.logFile, point, options.component)
    : isArmed(options.logFile, point, options.component);
}

/** Records the fault, then does it: SIGKILL, SIGSTOP (resumed by the suite), or a hang. */
async function strike(
  point: KillPointName,
  moment: FaultMoment,
  options: FaultHookOptions,
): Promise<void> {
  const { effect } = killPoints[point];
  const counters = effect === 'kill' ? await options.lastCounters?.() : undefined;
  const fault: InjectedFault = {
    component: options.component,
    point,
    at: Date.now(),
    pid: process.pid,
    ...(counters === undefined ? {} : { counters }),
    ...moment,
  };
  if (options.logFile !== undefined) appendFileSync(options.logFile, `${JSON.stringify(fault)}\n`);
  if (effect === 'hang') return new Promise<void>(() => undefined);
  writeSync(2, `fault injection: ${effect === 'kill' ? 'SIGKILL' : 'SIGSTOP'} at ${point}\n`);
  process.kill(process.pid, effect === 'kill' ? 'SIGKILL' : 'SIGSTOP');
}

/**
 * The library hooks that make this process fail at the plan's points, each with its chance
 * and at most its number of strikes (an armed point also only while the suite armed it). Each
 * fault is first appended to `logFile`, so the suite can tell what it injected from what it
 * caused from outside.
 */
export function faultHooks(plan: FaultPlan, options: FaultHookOptions): ServiceHooks {
  const merged: Record<string, object> = {};
  // Once a kill has begun (the process reads its counters first), no other unit of work passes
  // a point: none strikes a second time, none gets further than it would have in a crash.
  let dying = false;
  const never = () => new Promise<void>(() => undefined);
  for (const [point, planned] of Object.entries(plan)) {
    if (!isKillPointName(point)) continue;
    const rate = { chance: chanceOf(planned), times: timesOf(planned) };
    const act = (moment: FaultMoment) => {
      if (dying) return never();
      if (!strikes(point, rate, options)) return undefined;
      if (killPoints[point].effect === 'kill') dying = true;
      return strike(point, moment, options);
    };
    for (const [worker, hooks] of Object.entries(killPoints[point].hooks(act))) {
      merged[worker] = { ...merged[worker], ...hooks };
    }
  }
  return merged;
}
