import { existsSync, readFileSync } from 'node:fs';
import type { CounterValues } from '../process-counters.ts';
import { killPoints, type KillPointName } from './kill-points.ts';

/** What a process writes, one JSON line, just before it fails at a point. */
export interface InjectedFault {
  readonly component: string;
  readonly point: KillPointName;
  /** Epoch milliseconds: the drain's deadline counts from the last fault. */
  readonly at: number;
  /** The events of the unit of work it failed in (a frozen relay's batch). */
  readonly eventIds?: readonly string[];
  /** The process that failed: the report tells its incarnations apart by it. */
  readonly pid?: number;
  /** Its in-memory counters just before a self-kill, which no sampler can read afterwards. */
  readonly counters?: CounterValues;
}

/** The faults role processes recorded before they struck (a kill, a freeze, a hang). */
export function readInjectedFaults(logFile: string): InjectedFault[] {
  if (!existsSync(logFile)) return [];
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as InjectedFault);
}

/** For the report: `order-relay self-kill after publish (injected) 3x`, one line per kind. */
export function describeInjectedFaults(faults: readonly InjectedFault[]): string[] {
  const counts = new Map<string, number>();
  for (const { component, point } of faults) {
    const line = `${component} ${killPoints[point].description} (injected)`;
    counts.set(line, (counts.get(line) ?? 0) + 1);
  }
  return [...counts].map(([line, times]) => `${line} ${times}x`);
}
