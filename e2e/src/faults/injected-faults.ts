import { existsSync, readFileSync } from 'node:fs';
import type { InjectedFault } from './fault-hooks.ts';
import { killPoints } from './kill-points.ts';

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
