import { existsSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { KillPointName } from './kill-points.ts';

/**
 * Armed points are files beside the fault log: the suite creates one to arm a point in one
 * component and removes it to disarm; the role process looks for it at each pass.
 */
function armFile(faultLog: string, point: KillPointName, component: string): string {
  return path.join(path.dirname(faultLog), `armed.${point}.${component}`);
}

export function armFault(faultLog: string, point: KillPointName, component: string): void {
  writeFileSync(armFile(faultLog, point, component), '');
}

export function disarmFault(faultLog: string, point: KillPointName, component: string): void {
  rmSync(armFile(faultLog, point, component), { force: true });
}

/** Whether the point is armed in this component (a hang holds while it is). */
export function isArmed(faultLog: string, point: KillPointName, component: string): boolean {
  return existsSync(armFile(faultLog, point, component));
}

/** Disarms the point and says whether it was armed: of two passes at once, only one strikes. */
export function takeArm(faultLog: string, point: KillPointName, component: string): boolean {
  try {
    unlinkSync(armFile(faultLog, point, component));
    return true;
  } catch {
    return false;
  }
}
