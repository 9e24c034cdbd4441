import { pollUntil } from '@outbox-inbox/infra';
import { startLoad, type LoadResult } from './load-generator.ts';
import { checkInvariants, waitUntilSettled, type InvariantReport } from './invariants.ts';
import { observe } from './observer.ts';
import { recordScenario, type ScenarioCounts } from './report.ts';
import { superviseRoles } from './supervisor.ts';
import { paymentLimit, startSystem, type System, type SystemOptions } from './system.ts';

/** Orders per second offered while faults are injected: sized to finish in CI on two cores. */
export const defaultRate = Number(process.env['E2E_RATE'] ?? 25);

export interface FaultContext {
  readonly system: System;
  readonly supervisor: ReturnType<typeof superviseRoles>;
  /** Orders accepted so far: faults wait for traffic before they strike. */
  acceptedSoFar(): number;
  /** HTTP statuses answered so far, by code. */
  statusesSoFar(): Readonly<Record<string, number>>;
  /** Notes what was done, for the report. */
  fault(description: string): void;
}

export interface ScenarioResult {
  readonly counts: ScenarioCounts;
  readonly invariants: InvariantReport;
  readonly load: LoadResult;
  readonly restarts: Readonly<Record<string, number>>;
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
    inject: (context: FaultContext) => Promise<void>;
  },
): Promise<ScenarioResult> {
  const system = await startSystem({
    name: `e2e-${name.replaceAll(/[^a-z0-9]+/gi, '-').toLowerCase()}-${process.pid}`,
    ...options.system,
  });
  const supervisor = superviseRoles(system);
  const observer = observe(system);
  const faults: string[] = [];
  let failed = false;
  try {
    const load = startLoad({
      baseUrl: system.orderUrl,
      ratePerSecond: options.rate ?? defaultRate,
      cancelEvery: 7,
      failEvery: 11,
      paymentLimit,
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
    const injectionError = await options
      .inject({
        system,
        supervisor,
        acceptedSoFar: load.acceptedSoFar,
        statusesSoFar: load.statusesSoFar,
        fault: (description) => faults.push(description),
      })
      .then(
        () => undefined,
        (error: unknown) => error ?? new Error('fault injection failed'),
      );
    const loadResult = await load.stop();
    if (injectionError !== undefined) throw injectionError;
    const drainSeconds = await waitUntilSettled(system, loadResult);
    await observer.stop();
    const invariants = await checkInvariants(system, loadResult);
    const restarts = supervisor.restarts();
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
      faults: [
        ...faults,
        ...Object.entries(restarts).map(([component, times]) => `${component} restarted ${times}x`),
      ],
      passed: invariants.violations.length === 0,
    };
    failed = !counts.passed;
    recordScenario(counts);
    console.log(`[${name}]`, JSON.stringify(counts));
    return { counts, invariants, load: loadResult, restarts };
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    await supervisor.stop();
    await observer.stop().catch(() => undefined);
    // A failed scenario keeps every process's log under .stack/ for the post-mortem.
    await system.down({ keepLogs: failed || process.env['E2E_KEEP_LOGS'] === '1' });
  }
}
