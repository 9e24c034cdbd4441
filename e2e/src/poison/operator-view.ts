import type { OutboxTables } from '@outbox-inbox/outbox';
import {
  listFailedOutboxEvents,
  readParkedMessages,
  type FailedOutboxEvent,
  type ParkedMessage,
} from '@outbox-inbox/outbox/ops';
import { pollUntil } from '@outbox-inbox/infra';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { metricTotal, probeReady, scrapeMetrics } from '../role-probes.ts';
import type { System } from '../system.ts';
import { poisonProblems } from './poison-findings.ts';
import type { PoisonMessage } from './poison-messages.ts';
import type { PoisonRow } from './poison-outbox.ts';
import type { Landed } from './produce-poison.ts';

/**
 * The library's operator functions over one of the suite's pools. Never destroyed: that would
 * end the pool, which the system closes itself.
 */
export function operatorDb(pool: pg.Pool): Kysely<OutboxTables> {
  return new Kysely<OutboxTables>({ dialect: new PostgresDialect({ pool }) });
}

/** Every parked message of a database, page by page, as an operator reads them. */
export async function allParked(db: Kysely<OutboxTables>): Promise<ParkedMessage[]> {
  const all: ParkedMessage[] = [];
  for (;;) {
    const page = await readParkedMessages(db, { afterId: all.at(-1)?.id, limit: 100 });
    all.push(...page);
    if (page.length < 100) return all;
  }
}

/** The failed rows among `eventIds`, once all of them are failed. */
export async function failedRows(
  db: Kysely<OutboxTables>,
  eventIds: readonly string[],
): Promise<FailedOutboxEvent[] | undefined> {
  const failed = (await listFailedOutboxEvents(db, { limit: 1000 })).filter((row) =>
    eventIds.includes(row.eventId),
  );
  return failed.length === eventIds.length ? failed : undefined;
}

/** A metric of one role process, summed over its labels. */
async function metric(system: System, component: string, name: string): Promise<number> {
  const role = system.roles.find((candidate) => candidate.name === component);
  const text = role === undefined ? undefined : await scrapeMetrics(role);
  if (text === undefined) throw new Error(`${component} did not answer /metrics`);
  return metricTotal(text, name);
}

async function readiness(system: System, component: string): Promise<string | undefined> {
  const role = system.roles.find((candidate) => candidate.name === component);
  return role === undefined ? undefined : (await probeReady(role, 5000))?.status;
}

/** What an operator finds once the poison has settled: rows, messages, metrics, readiness. */
export interface OperatorFindings {
  readonly failed: readonly FailedOutboxEvent[];
  readonly parked: readonly ParkedMessage[];
  readonly signals: Readonly<Record<string, number | string | undefined>>;
}

/**
 * Waits until the refused rows are listed as failed and every poison message is parked (or
 * says what is missing), then reads the signals: the metrics and each process's readiness.
 */
export async function operatorFindings(
  system: System,
  poison: {
    readonly rows: readonly PoisonRow[];
    readonly corpus: readonly PoisonMessage[];
    readonly landed: readonly Landed[];
  },
): Promise<OperatorFindings> {
  const orderOps = operatorDb(system.orderDb);
  const paymentOps = operatorDb(system.paymentDb);
  const everyParked = async () => [
    ...(await allParked(orderOps)),
    ...(await allParked(paymentOps)),
  ];
  const failed = await pollUntil(
    () =>
      failedRows(
        orderOps,
        poison.rows.map((row) => row.eventId),
      ),
    { timeoutMs: 30_000, description: 'the refused outbox rows to be set aside' },
  );
  const parked = await pollUntil(
    async () => {
      const all = await everyParked();
      return poisonProblems(poison.corpus, poison.landed, all).length === 0 ? all : undefined;
    },
    { timeoutMs: 30_000, description: 'every poison message to be parked' },
  ).catch(async (error: unknown) => {
    const problems = poisonProblems(poison.corpus, poison.landed, await everyParked());
    throw new Error(problems.join('\n'), { cause: error });
  });
  // The backlog gauges answer from a query a few seconds old: wait until they have caught up
  // with the rows just read (or time out, and let the caller's assertions show the values).
  await pollUntil(
    async () => {
      const shown =
        (await metric(system, 'order-relay', 'outbox_failed_events')) === failed.length &&
        (await metric(system, 'payment-consumer', 'parked_messages')) +
          (await metric(system, 'order-consumer', 'parked_messages')) ===
          parked.length;
      return shown || undefined;
    },
    { timeoutMs: 10_000, intervalMs: 500, description: 'the metrics to show the poison' },
  ).catch(() => undefined);
  const signals = {
    'order outbox_failed_events': await metric(system, 'order-relay', 'outbox_failed_events'),
    'order-relay outbox_publish_refused_total': await metric(
      system,
      'order-relay',
      'outbox_publish_refused_total',
    ),
    'payment parked_messages': await metric(system, 'payment-consumer', 'parked_messages'),
    'order parked_messages': await metric(system, 'order-consumer', 'parked_messages'),
    'order-relay ready': await readiness(system, 'order-relay'),
    'payment-consumer ready': await readiness(system, 'payment-consumer'),
  };
  return { failed, parked, signals };
}
