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

/** How a scenario runs: its system, its load, the faults it injects and its own checks. */
export interface ScenarioOptions {
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
}

/**
 * One resilience scenario: the whole system under steady load while `inject` breaks things,
 * then load stops, the system settles, and the invariants are read from both databases and
 * both topics. The counts go to e2e/report/.
 */
export async function runScenario(name: string, options: ScenarioOptions): Promise<ScenarioResult> {
  // Where a scenario's wall time goes, printed at its end: the suite's run time is mostly this.
  const clock = new PhaseClock();
  const system = await startSystem({
    name: `e2e-${name.replaceAll(/[^a-z0-9]+/gi, '-').toLowerCase()}-${process.pid}`,
    ...options.system,
  });
  const run: ScenarioRun = {
    name,
    options,
    system,
    clock,
    supervisor: superviseRoles(system),
    observer: observe(system),
    faults: new ScenarioFaults(),
  };
  let failed = false;
  clock.lap(`start (${system.startedIn})`);
  try {
    const loadResult = await loadThroughFaults(run);
    const settled = await settle(run, loadResult);
    const result = await checkSettledSystem(run, loadResult, settled);
    const { counts } = result;
    failed = !counts.passed;
    clock.lap('checks');
    // The report's verdict is the whole test's: an assertion after this one fails it too.
    onTestFinished(({ task }) =>
      recordScenario({ ...counts, passed: counts.passed && task.result?.state === 'pass' }),
    );
    console.log(`[${name}]`, JSON.stringify(counts));
    return result;
  } catch (error) {
    failed = true;
    // The report shows a scenario that stopped early too, with the faults it had injected.
    recordScenario(abortedRow(name, run.faults.descriptions, error));
    throw error;
  } finally {
    await run.supervisor.stop();
    await run.observer.stop().catch(() => undefined);
    // A failed scenario keeps every process's log under .stack/ for the post-mortem.
    await system.down({ keepLogs: failed || process.env['E2E_KEEP_LOGS'] === '1' });
    clock.lap('teardown');
    console.log(`[${name}] seconds: ${clock.summary()}`);
  }
}

/** A scenario under way: its system, what watches it, and what the scenario did to it so far. */
interface ScenarioRun {
  readonly name: string;
  readonly options: ScenarioOptions;
  readonly system: System;
  readonly clock: PhaseClock;
  readonly supervisor: ReturnType<typeof superviseRoles>;
  readonly observer: ReturnType<typeof observe>;
  readonly faults: ScenarioFaults;
}

/** What a scenario did to its system, noted as it goes: for the report and the restart check. */
class ScenarioFaults {
  /** Each fault and finding, in order: the report's `faults`. */
  readonly descriptions: string[] = [];
  /** Kills that landed on a live process, by component. */
  readonly kills: Record<string, number> = {};
  /** Kills and stops by component: each may explain one restart. */
  readonly takenDown: Record<string, number> = {};
  /** When the last fault was noted (Date.now()); 0 before the first. */
  lastFaultAt = 0;

  /** Notes a component killed or stopped, which moves the fault clock. */
  noteDown(component: string): void {
    this.takenDown[component] = (this.takenDown[component] ?? 0) + 1;
    this.lastFaultAt = Date.now();
  }
}

/**
 * Offers load, waits until the system flows, lets the scenario inject its faults and then stops
 * the load: what the load got. An injection that failed fails the scenario once the load stopped.
 */
async function loadThroughFaults(run: ScenarioRun): Promise<LoadResult> {
  const { system, options, clock } = run;
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
  const injectionError = await options.inject(faultContext(run, load)).then(
    () => undefined,
    (error: unknown) => error ?? new Error('fault injection failed'),
  );
  const loadResult = await load.stop();
  if (injectionError !== undefined) throw injectionError;
  clock.lap('faults');
  return loadResult;
}

/** What `inject` breaks the system with: every kill, stop and fault is noted in `run.faults`. */
function faultContext(run: ScenarioRun, load: ReturnType<typeof startLoad>): FaultContext {
  const { system, supervisor, faults } = run;
  const kill = async (component: string): Promise<boolean> => {
    assertMayBreak(run, component, 'kill');
    // What the victim counted in memory so far: a sample after the kill cannot read it.
    await run.observer.sampleNow();
    const killed = await system.stack.kill(component);
    if (killed) {
      faults.kills[component] = (faults.kills[component] ?? 0) + 1;
      faults.noteDown(component);
      faults.descriptions.push(`${component} SIGKILL`);
    }
    return killed;
  };
  return {
    system,
    supervisor,
    acceptedSoFar: load.acceptedSoFar,
    acceptedIdsSoFar: load.acceptedIdsSoFar,
    statusesSoFar: load.statusesSoFar,
    setRate: (ratePerSecond) => load.setRate(ratePerSecond),
    kill,
    killWhenRunning: async (component) => {
      await pollUntil(async () => system.stack.isRunning(component) && (await kill(component)), {
        timeoutMs: 90_000,
        intervalMs: 100,
        description: `a kill of ${component} to land on a live process`,
      });
    },
    stop: async (component) => {
      assertMayBreak(run, component, 'stop');
      await system.stack.stop(component);
      faults.noteDown(component);
      faults.descriptions.push(`${component} stopped`);
    },
    fault: (description) => {
      faults.lastFaultAt = Date.now();
      faults.descriptions.push(description);
    },
    note: (description) => faults.descriptions.push(description),
  };
}

/**
 * A scenario on the shared servers that reaches for a server says what it forgot.
 * Its roles and its pooler are processes of the scenario's own stack: those it may break.
 */
function assertMayBreak(
  run: Pick<ScenarioRun, 'name' | 'system'>,
  component: string,
  control: string,
): void {
  const { name, system } = run;
  const own = system.stack.status().find((status) => status.name === component);
  if (!system.onSharedServers || own?.kind === 'process') return;
  throw new Error(
    `scenario ${name} runs on the suite's shared servers and may not ${control} ${component}: ` +
      `give it system.ownServers with the reason (docs/contributing.md, "Add a scenario")`,
  );
}

/** When the system settled after the load, and how long its drain took. */
interface Settled {
  readonly drainSeconds: number;
  /** Date.now() at that moment. */
  readonly settledAt: number;
}

/** Waits until the system settled after the load and the last fault (injected ones too). */
async function settle(run: ScenarioRun, loadResult: LoadResult): Promise<Settled> {
  const { system, options, faults } = run;
  const drainSeconds = await waitUntilSettled(system, loadResult, {
    boundMs: options.drainBoundMs ?? defaultDrainBoundMs,
    lastFaultAt: () =>
      Math.max(faults.lastFaultAt, ...readInjectedFaults(system.faultLog).map((fault) => fault.at)),
  });
  const settledAt = Date.now();
  run.clock.lap('settle');
  return { drainSeconds, settledAt };
}

/**
 * Stops watching the settled system, then checks it: the invariants, the scenario's own checks,
 * and the restarts no fault explains.
 */
async function checkSettledSystem(
  run: ScenarioRun,
  loadResult: LoadResult,
  settled: Settled,
): Promise<ScenarioResult> {
  const { system, options, observer, supervisor, faults } = run;
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
  const unexpectedRestarts = restartsNotExplained(restarts, faults.takenDown, injectedDeaths);
  const counts = scenarioCounts(run, {
    loadResult,
    invariants,
    settled,
    injected,
    restarts,
    unexpectedRestarts,
  });
  return {
    counts,
    invariants,
    load: loadResult,
    restarts,
    kills: faults.kills,
    injectedDeaths,
    unexpectedRestarts,
  };
}

/** The scenario's row in the report, from what its checks found. */
function scenarioCounts(
  run: ScenarioRun,
  found: {
    readonly loadResult: LoadResult;
    readonly invariants: InvariantReport;
    readonly settled: Settled;
    readonly injected: readonly InjectedFault[];
    readonly restarts: Readonly<Record<string, number>>;
    readonly unexpectedRestarts: readonly string[];
  },
): ScenarioCounts {
  const { observer, faults } = run;
  const { loadResult, invariants, settled, injected, restarts, unexpectedRestarts } = found;
  return {
    scenario: run.name,
    ordersAccepted: loadResult.accepted.size,
    ordersRefused: loadResult.refused,
    eventsPublished: invariants.eventsPublished,
    duplicatesDelivered: invariants.duplicatesDelivered,
    duplicatesDroppedByInbox: observer.duplicatesDroppedByInbox(),
    duplicatesDroppedByDedup: observer.duplicatesDroppedByDedup(),
    largestBacklog: observer.largestBacklog(),
    drainSeconds: Math.round(settled.drainSeconds * 10) / 10,
    recoverySeconds: secondsSinceLastFault(settled.settledAt, [
      faults.lastFaultAt === 0 ? undefined : faults.lastFaultAt,
      ...injected.map((fault) => fault.at),
    ]),
    faults: [
      ...faults.descriptions,
      ...describeInjectedFaults(injected),
      ...Object.entries(restarts).map(
        ([component, times]) => `${component} restarted by the supervisor ${times}x`,
      ),
    ],
    passed: invariants.violations.length === 0 && unexpectedRestarts.length === 0,
  };
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
