import { pollUntil } from '@outbox-inbox/infra';
import { armFault, disarmFault } from './faults/arming.ts';
import { readInjectedFaults } from './faults/injected-faults.ts';
import { secondsToRecover } from './recovery.ts';
import { metricTotal, probeReady, scrapeMetrics } from './role-probes.ts';
import { traffic, type FaultContext } from './scenario.ts';
import type { System, SystemProcess } from './system.ts';

/** What one gray failure showed: the signal an operator saw, and how long recovery took. */
export interface GrayFailure {
  readonly signal: string;
  readonly recoverySeconds: number;
}

function role(system: System, name: string): SystemProcess {
  const found = system.roles.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no role process named ${name}`);
  return found;
}

/** A worker of one of these processes that `/health/ready` reports stalled, with its reason. */
export async function stalledWorker(
  system: System,
  names: readonly string[],
  worker: string,
): Promise<string | undefined> {
  for (const name of names) {
    const ready = await probeReady(role(system, name));
    const check = ready?.workers[worker];
    if (ready?.status === 'degraded' && check?.status === 'stalled')
      return `${name} /health/ready degraded: ${worker} ${check.reason ?? ''}`;
  }
  return undefined;
}

/** The fault is cleared: notes it, and measures until what it held back has settled. */
async function cleared(context: FaultContext, what: string): Promise<number> {
  context.fault(what);
  const seconds = await secondsToRecover(context.system, context.acceptedIdsSoFar(), Date.now());
  context.note(`${what}: recovered in ${seconds} s`);
  return seconds;
}

/**
 * Freezes a server (SIGSTOP to its process group) under load, keeps it frozen until the
 * operator's signal shows it, then thaws it (SIGCONT) and measures the recovery.
 */
export async function freezeServer(
  context: FaultContext,
  server: string,
  signal: () => Promise<string | undefined>,
): Promise<GrayFailure> {
  await traffic(context, 2);
  context.system.stack.pause(server);
  context.fault(`${server} SIGSTOP`);
  let seen: string;
  try {
    seen = await pollUntil(signal, { timeoutMs: 45_000, description: `${server} frozen to show` });
  } finally {
    context.system.stack.resume(server);
  }
  return { signal: seen, recoverySeconds: await cleared(context, `${server} SIGCONT`) };
}

/** order-api's readiness while PostgreSQL does not answer: 503, database unreachable. */
export async function apiUnavailable(system: System): Promise<string | undefined> {
  const ready = await probeReady(role(system, 'order-api'), 5000);
  return ready?.httpStatus === 503 ? `order-api /health/ready ${ready.status}` : undefined;
}

/**
 * A relay freezes itself after Kafka acknowledged its batch and before it commits
 * `published_at`. PostgreSQL ends its idle transaction, another relay publishes the rows, and
 * only then does the frozen one wake (SIGCONT), as a zombie whose batch moved on.
 */
export async function zombieRelay(
  context: FaultContext,
  frozen: string,
  metricsOf: string,
): Promise<GrayFailure & { readonly batch: readonly string[] }> {
  const { system } = context;
  await traffic(context, 2);
  armFault(system.faultLog, 'relay-freeze-after-publish', frozen);
  const batch = await pollUntil(
    () =>
      readInjectedFaults(system.faultLog).find(
        (fault) => fault.point === 'relay-freeze-after-publish' && fault.component === frozen,
      )?.eventIds,
    { timeoutMs: 30_000, description: `${frozen} to freeze mid-batch` },
  );
  context.fault(`${frozen} froze mid-batch (${batch.length} events sent, not marked published)`);
  try {
    const signal = await pollUntil(
      async () => {
        const text = await scrapeMetrics(role(system, metricsOf));
        const age =
          text === undefined ? 0 : metricTotal(text, 'outbox_oldest_unpublished_age_seconds');
        const silent = (await probeReady(role(system, frozen))) === undefined;
        return silent && age >= 3
          ? `${frozen} does not answer; outbox_oldest_unpublished_age_seconds ${age.toFixed(1)}`
          : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, description: 'the frozen batch to show' },
    );
    await pollUntil(() => allPublished(system, batch), {
      timeoutMs: 60_000,
      intervalMs: 250,
      description: 'another relay to publish the frozen batch',
    });
    context.note(`the frozen batch was published by another relay while ${frozen} slept`);
    system.stack.resume(frozen);
    await pollUntil(() => probeReady(role(system, frozen)), {
      timeoutMs: 30_000,
      description: `${frozen} to answer again`,
    });
    return { signal, batch, recoverySeconds: await cleared(context, `${frozen} SIGCONT (zombie)`) };
  } finally {
    system.stack.resume(frozen);
  }
}

async function allPublished(system: System, eventIds: readonly string[]): Promise<boolean> {
  const { rows } = await system.orderDb.query<{ n: string }>(
    'SELECT count(*) AS n FROM outbox_event WHERE event_id = ANY($1::uuid[]) AND published_at IS NULL',
    [eventIds],
  );
  return Number(rows[0]?.n ?? 1) === 0;
}

/**
 * Every inbox handler of the processor hangs until disarmed: each attempt ends at the
 * handler timeout, the processor shows as stalled, and once the handlers answer again the
 * rows are handled on their next attempt.
 */
export async function hangingHandlers(
  context: FaultContext,
  processor: string,
): Promise<GrayFailure & { readonly timedOut: number }> {
  const { system } = context;
  await traffic(context, 2);
  armFault(system.faultLog, 'processor-hang', processor);
  context.fault(`${processor} inbox handlers hang`);
  let signal: string;
  let timedOut: number;
  try {
    signal = await pollUntil(() => stalledWorker(system, [processor], 'inbox-processor'), {
      timeoutMs: 45_000,
      intervalMs: 250,
      description: `${processor} to show the hang`,
    });
    timedOut = await pollUntil(() => rowsThatTimedOut(system), {
      timeoutMs: 45_000,
      intervalMs: 250,
      description: 'a handler attempt to time out',
    });
  } finally {
    disarmFault(system.faultLog, 'processor-hang', processor);
  }
  const recoverySeconds = await cleared(context, `${processor} handlers answer again`);
  return { signal, timedOut, recoverySeconds };
}

async function rowsThatTimedOut(system: System): Promise<number | undefined> {
  const { rows } = await system.paymentDb.query<{ n: string }>(
    "SELECT count(*) AS n FROM inbox_event WHERE last_error LIKE '%timed out%'",
  );
  const count = Number(rows[0]?.n ?? 0);
  return count > 0 ? count : undefined;
}
