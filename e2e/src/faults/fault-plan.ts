import { isKillPointName, killPoints, type KillPoint, type KillPointName } from './kill-points.ts';

/**
 * How often a process dies at a kill point: the chance (0..1) per unit of work, and optionally
 * the most deaths there in the whole system (counted in the fault log, across restarts), so a
 * scenario can ask for "a few" deaths at a point passed thousands of times.
 */
export type KillPointRate = number | { readonly chance: number; readonly times: number };

export type FaultPlan = Partial<Readonly<Record<KillPointName, KillPointRate>>>;

export function chanceOf(rate: KillPointRate | undefined): number {
  return typeof rate === 'object' ? rate.chance : (rate ?? 0);
}

export function timesOf(rate: KillPointRate | undefined): number | undefined {
  return typeof rate === 'object' ? rate.times : undefined;
}

/** The plan's points that a process of `role` (of `service`) passes through, with a chance above 0. */
export function faultsOfRole(plan: FaultPlan, role: string, service?: string): FaultPlan {
  return Object.fromEntries(
    Object.entries(plan).filter(([name, rate]) => {
      if (!isKillPointName(name) || chanceOf(rate) <= 0) return false;
      const point: KillPoint = killPoints[name];
      return point.role === role && (point.service === undefined || point.service === service);
    }),
  );
}

/** `relay-after-publish=0.1,dedup-after-apply=0.05x2,…`: how a plan travels to a role process (E2E_FAULTS). */
export function formatFaultPlan(plan: FaultPlan): string {
  return Object.entries(plan)
    .map(([name, rate]) => {
      const times = timesOf(rate);
      return `${name}=${chanceOf(rate)}${times === undefined ? '' : `x${times}`}`;
    })
    .join(',');
}

export function parseFaultPlan(text: string | undefined): FaultPlan {
  const plan: Partial<Record<KillPointName, KillPointRate>> = {};
  for (const entry of (text ?? '').split(',').filter((item) => item.trim() !== '')) {
    const [name = '', value = ''] = entry.split('=').map((part) => part.trim());
    const [chanceText = '', timesText] = value.split('x');
    const chance = Number(chanceText);
    if (!isKillPointName(name)) {
      throw new Error(
        `E2E_FAULTS: unknown kill point "${name}"; known: ${Object.keys(killPoints).join(', ')}`,
      );
    }
    if (chanceText === '' || !(chance >= 0 && chance <= 1)) {
      throw new Error(`E2E_FAULTS: ${name} needs a chance from 0 to 1 (got "${value}")`);
    }
    if (timesText === undefined) {
      plan[name] = chance;
      continue;
    }
    const times = Number(timesText);
    if (!(Number.isInteger(times) && times >= 1)) {
      throw new Error(
        `E2E_FAULTS: ${name} needs a whole number of deaths after "x" (got "${value}")`,
      );
    }
    plan[name] = { chance, times };
  }
  return plan;
}
