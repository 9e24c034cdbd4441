import { pollUntil } from '@outbox-inbox/infra';
import { onTestFinished } from 'vitest';
import { startLoad, type LoadResult } from './load-generator.ts';
import type { InjectedFault } from './faults/injected-faults.ts';
import { describeInjectedFaults, readInjectedFaults } from './faults/injected-faults.ts';
import { killPoints } from './faults/kill-points.ts';
import { restartsNotExplained } from './faults/unexpected-restarts.ts';
import { checkInvariants, type InvariantReport } from './invariants/check-invariants.ts';
import type { InvariantExpectations } from './invariants/snapshot.ts';
import { defaultDrainBoundMs, waitUntilSettled } from './invariants/settle.ts';
import { observe } from './observer.ts';
import { abortedRow, recordScenario, type ScenarioCounts } from './report.ts';
import { superviseRoles } from './supervisor.ts';
import { paymentLimit, startSystem, type System, type SystemOptions } from './system.ts';

/** Orders per second offered while faults are injected: sized to finish in CI on two cores. */
export const defaultRate = Number(process.env['E2E_RATE'] ?? 25);

export interface FaultContext {
  readonly system: System;
  readonly supervisor: ReturnType<typeof superviseRoles>;
  /** Orders accepted so far: faults wait for traffic before they strike. */
  acceptedSoFar(): number;
  /** Their ids: what must settle before the system counts as recovered. */
  acceptedIdsSoFar(): string[];
  /** HTTP statuses answered so far, by code. */
  statusesSoFar(): Readonly<Record<string, number>>;
  /** Changes the offered rate of orders per second from now on (an overload scenario's). */
  setRate(ratePerSecond: number): void;
  /**
   * SIGKILLs a component and notes it, only when a live process was signalled; returns whether
   * one was. A supervised role killed here may be restarted once without counting as unexpected.
   */
  kill(component: string): Promise<boolean>;
  /**
   * Waits until the component runs (a supervised role may be restarting after a kill point),
   * then kills it; tries again if it died on its own meanwhile. Fails when no kill lands.
   */
  killWhenRunning(component: string): Promise<void>;
  /** Stops a component gracefully, noted like `kill` (a supervised role may restart once). */
  stop(component: string): Promise<void>;
  /**
   * Notes what was done, for the report. The last note is where the recovery time starts:
   * note the moment a fault is cleared (`kafka restarted`), not only the moment it struck.
   */
  fault(description: string): void;
  /** Notes a finding for the report (a measured recovery) without moving the fault clock. */
  note(description: string): void;
}

export interface ScenarioResult {
  readonly counts: ScenarioCounts;
  readonly invariants: InvariantReport;
  readonly load: LoadResult;
  readonly restarts: Readonly<Record<string, number>>;
  /** Kills that landed on a live process, by component. */
  readonly kills: Readonly<Record<string, number>>;
  /** Deaths the armed kill points caused. */
  readonly injectedDeaths: readonly InjectedFault[];
  /** `order-relay restarted 3x, expected at most 1x`: restarts no fault explains. */
  readonly unexpectedRestarts: readonly string[];
}

/**
 * Lets the system flow for a while between faults, measured in orders accepted; `description`
 * names the wait in the timeout's error.
 */
export async function traffic(
  context: Pick<FaultContext, 'acceptedSoFar'>,
  seconds: number,
  description = 'traffic between faults',
): Promise<void> {
  const before = context.acceptedSoFar();
  await pollUntil(() => context.acceptedSoFar() >= before + defaultRate * seconds, {
    timeoutMs: 60_000,
    description,
  });
}

/** Seconds from the latest of the fault times to `settledAt`; null when there was none. */
function secondsSinceLastFault(
  settledAt: number,
  faultTimes: readonly (number | undefined)[],
): number | null {
  const times = faultTimes.filter((at) => at !== undefined);
  if (times.length === 0) return null;
  return Math.round((settledAt - Math.max(...times)) / 100) / 10;
}

/**
 * One resilience scenario: the whole system under steady load while `inject` breaks things,
 * then load stops, the system settles, and the invariants are read from both databases and
 * both topics. The counts go to e2e/report/.
 */
export async function runScenario(
  name: string,
  options: {
    system?: Omit<SystemOptions, 'name'>;
    rate?: number;
    /** A 503 is the order's final answer (PostgreSQL outages); otherwise it is retried. */
    unavailableIsFinal?: boolean;
    /** Requests the load keeps in flight at most (default 64). */
    maxInFlight?: number;
    /** Connections the load opens to the api at most (default 64). */
    connections?: number;
    /** Longest the system may take to settle after the last fault (default 45 s). */
    drainBoundMs?: number;
    inject: (context: FaultContext) => Promise<void>;
    /** What the scenario did on purpose that the invariants must allow (injected garbage). */
    expect?: Partial<InvariantExpectations>;
    /**
     * The scenario's own checks of the settled system, beside the invariants: each problem it
     * returns is a violation.
     */
    checkSettled?: (system: System) => Promise<readonly string[]>;
  },
): Promise<ScenarioResult> {
  // Where a scenario's wall time goes, printed at its end: the suite's run time is mostly this.
  const clock = new PhaseClock();
  const system = await startSystem({
    name: `e2e-${name.replaceAll(/[^a-z0-9]+/gi, '-').toLowerCase()}-${process.pid}`,
    ...options.system,
  });
  const supervisor = superviseRoles(system);
  const observer = observe(system);
  const faults: string[] = [];
  const kills: Record<string, number> = {};
  const takenDown: Record<string, number> = {};
  let lastFaultAt = 0;
  const noteDown = (component: string): void => {
    takenDown[component] = (takenDown[component] ?? 0) + 1;
    lastFaultAt = Date.now();
  };
  // A scenario on the shared servers that reaches for a server says what it forgot.
  // Its roles and its pooler are processes of the scenario's own stack: those it may break.
  const mayBreak = (component: string, control: string): void => {
    const own = system.stack.status().find((status) => status.name === component);
    if (!system.onSharedServers || own?.kind === 'process') return;
    throw new Error(
      `scenario ${name} runs on the suite's shared servers and may not ${control} ${component}: ` +
        `give it system.ownServers with the reason (docs/contributing.md, "Add a scenario")`,
    );
  };
  const kill = async (component: string): Promise<boolean> => {
    mayBreak(component, 'kill');
    // What the victim counted in memory so far: a sample after the kill cannot read it.
    await observer.sampleNow();
    const killed = await system.stack.kill(component);
    if (killed) {
      kills[component] = (kills[component] ?? 0) + 1;
      noteDown(component);
      faults.push(`${component} SIGKILL`);
    }
    return killed;
  };
  let failed = false;
  clock.lap(`start (${system.startedIn})`);
  try {
    const load = startLoad({
      baseUrl: system.orderUrl,
      ratePerSecond: options.rate ?? defaultRate,
      cancelEvery: 7,
      failEvery: 11,
      paymentLimit,
      unavailableIsFinal: options.unavailableIsFinal ?? false,
      ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
      ...(options.connections === undefined ? {} : { connections: options.connections }),
    });
    // Faults strike a system that already flows end to end (consumers joined their groups),
    // not one still warming up.
    await pollUntil(
      async () => {
        const { rows } = await system.orderDb.query<{ n: string }>(
          "SELECT count(*) AS n FROM orders WHERE status <> 'PENDING'",
        );
        return Number(rows[0]?.n ?? 0) >= 20;
      },
      { timeoutMs: 90_000, intervalMs: 200, description: 'the first orders to settle' },
    );
    clock.lap('warm-up');
    const injectionError = await options
      .inject({
        system,
        supervisor,
        acceptedSoFar: load.acceptedSoFar,
        acceptedIdsSoFar: load.acceptedIdsSoFar,
        statusesSoFar: load.statusesSoFar,
        setRate: (ratePerSecond) => load.setRate(ratePerSecond),
        kill,
        killWhenRunning: async (component) => {
          await pollUntil(
            async () => system.stack.isRunning(component) && (await kill(component)),
            {
              timeoutMs: 90_000,
              intervalMs: 100,
              description: `a kill of ${component} to land on a live process`,
            },
          );
        },
        stop: async (component) => {
          mayBreak(component, 'stop');
          await system.stack.stop(component);
          noteDown(component);
          faults.push(`${component} stopped`);
        },
        fault: (description) => {
          lastFaultAt = Date.now();
          faults.push(description);
        },
        note: (description) => faults.push(description),
      })
      .then(
        () => undefined,
        (error: unknown) => error ?? new Error('fault injection failed'),
      );
    const loadResult = await load.stop();
    if (injectionError !== undefined) throw injectionError;
    clock.lap('faults');
    const drainSeconds = await waitUntilSettled(system, loadResult, {
      boundMs: options.drainBoundMs ?? defaultDrainBoundMs,
      lastFaultAt: () =>
        Math.max(lastFaultAt, ...readInjectedFaults(system.faultLog).map((fault) => fault.at)),
    });
    const settledAt = Date.now();
    clock.lap('settle');
    await observer.stop();
    const injected = readInjectedFaults(system.faultLog);
    const checked = await checkInvariants(system, loadResult, options.expect);
    const ownProblems = (await options.checkSettled?.(system)) ?? [];
    const invariants = { ...checked, violations: [...checked.violations, ...ownProblems] };
    // Every restart the supervisor still has under way is counted.
    await supervisor.stop();
    const restarts = supervisor.restarts();
    // Only a kill point's strike ends its process; a freeze or a hang does not restart it.
    const injectedDeaths = injected.filter((fault) => killPoints[fault.point].effect === 'kill');
    const unexpectedRestarts = restartsNotExplained(restarts, takenDown, injectedDeaths);
    const counts: ScenarioCounts = {
      scenario: name,
      ordersAccepted: loadResult.accepted.size,
      ordersRefused: loadResult.refused,
      eventsPublished: invariants.eventsPublished,
      duplicatesDelivered: invariants.duplicatesDelivered,
      duplicatesDroppedByInbox: observer.duplicatesDroppedByInbox(),
      duplicatesDroppedByDedup: observer.duplicatesDroppedByDedup(),
      largestBacklog: observer.largestBacklog(),
      drainSeconds: Math.round(drainSeconds * 10) / 10,
      recoverySeconds: secondsSinceLastFault(settledAt, [
        lastFaultAt === 0 ? undefined : lastFaultAt,
        ...injected.map((fault) => fault.at),
      ]),
      faults: [
        ...faults,
        ...describeInjectedFaults(injected),
        ...Object.entries(restarts).map(
          ([component, times]) => `${component} restarted by the supervisor ${times}x`,
        ),
      ],
      passed: invariants.violations.length === 0 && unexpectedRestarts.length === 0,
    };
    failed = !counts.passed;
    clock.lap('checks');
    // The report's verdict is the whole test's: an assertion after this one fails it too.
    onTestFinished(({ task }) =>
      recordScenario({ ...counts, passed: counts.passed && task.result?.state === 'pass' }),
    );
    console.log(`[${name}]`, JSON.stringify(counts));
    return {
      counts,
      invariants,
      load: loadResult,
      restarts,
      kills,
      injectedDeaths,
      unexpectedRestarts,
    };
  } catch (error) {
    failed = true;
    // The report shows a scenario that stopped early too, with the faults it had injected.
    recordScenario(abortedRow(name, faults, error));
    throw error;
  } finally {
    await supervisor.stop();
    await observer.stop().catch(() => undefined);
    // A failed scenario keeps every process's log under .stack/ for the post-mortem.
    await system.down({ keepLogs: failed || process.env['E2E_KEEP_LOGS'] === '1' });
    clock.lap('teardown');
    console.log(`[${name}] seconds: ${clock.summary()}`);
  }
}

/** Seconds spent in each phase of a scenario, in order. */
class PhaseClock {
  #last = performance.now();
  readonly #laps: string[] = [];

  lap(phase: string): void {
    const now = performance.now();
    this.#laps.push(`${phase} ${((now - this.#last) / 1000).toFixed(1)}`);
    this.#last = now;
  }

  summary(): string {
    return this.#laps.join(', ');
  }
}
