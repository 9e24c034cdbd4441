import { existsSync, readFileSync } from 'node:fs';
import { pollUntil } from '@outbox-inbox/infra';
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

/**
 * Waits until `point` has struck `times` times (in `component`, when given). A kill point
 * strikes by chance per unit of work, and a scenario that claims what a strike causes (a
 * duplicate) keeps its load going until one did, instead of hoping one falls within its fixed
 * traffic.
 */
export async function untilStruck(
  logFile: string,
  point: KillPointName,
  options: { readonly component?: string; readonly times?: number } = {},
): Promise<void> {
  const { component, times = 1 } = options;
  await pollUntil(
    () =>
      readInjectedFaults(logFile).filter(
        (fault) =>
          fault.point === point && (component === undefined || fault.component === component),
      ).length >= times,
    {
      timeoutMs: 90_000,
      description: `${times} strike(s) at ${point}${component === undefined ? '' : ` in ${component}`}`,
    },
  );
}
