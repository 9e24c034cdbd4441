import { pollUntil } from '@outbox-inbox/infra';
import { sql } from 'kysely';
import type { BenchContext } from '../context.ts';
import { benchDb } from '../database.ts';
import { freshTopics } from '../kafka.ts';
import { offerOrders } from '../load.ts';
import { cpuTable, measureCpu, serverGroups, type CpuUse } from '../cpu.ts';
import type { Section, Target } from '../report.ts';
import { migrateService, startRole, type RoleHandle } from '../services.ts';
import { fixed, int, percentile } from '../stats.ts';

const ORDER_TOPIC = 'order.events';
const PAYMENT_TOPIC = 'payment.events';

type Mode = 'notify' | 'polling';

interface Run {
  readonly rate: number;
  readonly mode: Mode;
  readonly offeredRate: number;
  readonly orders: number;
  readonly failed: number;
  readonly failures: string;
  readonly responseMs: readonly number[];
  readonly toKafkaMs: readonly number[];
  readonly toHandledMs: readonly number[];
  /** CPU while the load was offered, by process. */
  readonly cpu: CpuUse;
}

const CPU_GROUPS = ['bench', 'api', 'relay', 'consumer', 'processor', 'postgres', 'kafka'];

/**
 * B3: orders are POSTed to order-service's api at a fixed offered rate (open loop). Latency
 * is measured from the order's write transaction (orders.created_at, its start: conservative) to (a) Kafka appending the event
 * (the topic stamps records with LogAppendTime, i.e. the broker's clock at append, which is
 * the ack of an acks=-1 send on a one-broker cluster) and (b) payment-service's processor
 * handling it (`inbox_event.processed_at`). Each rate runs with NOTIFY wake-up, then with
 * polling alone (`RELAY_NOTIFY=false`, `PROCESSOR_NOTIFY=false`, the services' default poll
 * intervals). One machine, one clock.
 */
export async function latency(ctx: BenchContext): Promise<Section> {
  const { settings, stack } = ctx;
  const ordersUrl = await stack.createDatabase('bench_latency_orders');
  const paymentsUrl = await stack.createDatabase('bench_latency_payments');
  migrateService('order', ordersUrl);
  migrateService('payment', paymentsUrl);
  await freshTopics(ctx.kafka, [
    { topic: ORDER_TOPIC, partitions: 3, logAppendTime: true },
    { topic: PAYMENT_TOPIC, partitions: 3 },
  ]);
  const payments = benchDb<Record<string, never>>(paymentsUrl);
  const orders = benchDb<Record<string, never>>(ordersUrl);

  // When Kafka appended each order's event: read back from the topic by the bench.
  const appendedAt = new Map<string, number>();
  const consumer = ctx.kafka.consumer({
    groupId: `bench-latency-${Date.now()}`,
    maxWaitTimeInMs: 50,
  });
  const joined = new Promise<void>((resolve) =>
    consumer.on(consumer.events.GROUP_JOIN, () => resolve()),
  );
  await consumer.connect();
  await consumer.subscribe({ topic: ORDER_TOPIC, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      if (message.key) appendedAt.set(message.key.toString(), Number(message.timestamp));
    },
  });
  await joined;

  const api = await startRole(stack, {
    component: 'b3-order-api',
    service: 'order',
    role: 'api',
    databaseUrl: ordersUrl,
  });
  const inboxWriter = await startRole(stack, {
    component: 'b3-payment-consumer',
    service: 'payment',
    role: 'consumer',
    databaseUrl: paymentsUrl,
  });
  const workersFor = async (mode: Mode, n: number): Promise<RoleHandle[]> => {
    const notify = mode === 'notify' ? 'true' : 'false';
    return Promise.all([
      startRole(stack, {
        component: `b3-order-relay-${mode}-${n}`,
        service: 'order',
        role: 'relay',
        databaseUrl: ordersUrl,
        env: { RELAY_NOTIFY: notify, RELAY_BATCH_SIZE: String(settings.batchSize) },
      }),
      startRole(stack, {
        component: `b3-payment-processor-${mode}-${n}`,
        service: 'payment',
        role: 'processor',
        databaseUrl: paymentsUrl,
        env: { PROCESSOR_NOTIFY: notify },
      }),
    ]);
  };

  let handledSoFar = 0;
  const measure = async (
    rate: number,
    seconds: number,
    mode: Mode,
    workers: readonly RoleHandle[],
  ): Promise<Run> => {
    const [relay, processor] = workers;
    const { result: load, cpu } = await measureCpu(
      {
        api: api.pid(),
        relay: relay?.pid(),
        consumer: inboxWriter.pid(),
        processor: processor?.pid(),
        ...serverGroups(stack),
      },
      () => offerOrders({ baseUrl: api.url, rate, seconds }),
    );
    const ids = [...load.committed.keys()];
    await pollUntil(async () => (ids.every((id) => appendedAt.has(id)) ? true : undefined), {
      timeoutMs: 180_000,
      description: `every order of the ${rate}/s ${mode} run appended to ${ORDER_TOPIC}`,
    });
    handledSoFar += ids.length;
    await pollUntil(
      async () => {
        const result = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM inbox_event WHERE processed`.execute(payments);
        return (result.rows[0]?.n ?? 0) >= handledSoFar ? true : undefined;
      },
      { timeoutMs: 300_000, description: `every order of the ${rate}/s ${mode} run handled` },
    );
    const handled = await sql<{ id: string; ms: number }>`
      SELECT payload->>'orderId' AS id, extract(epoch FROM processed_at)::float8 * 1000 AS ms
      FROM inbox_event WHERE payload->>'orderId' = ANY(${ids}::text[])`.execute(payments);
    // "Commit", conservatively: the order's write transaction start (orders.created_at is
    // now()); the HTTP answer can arrive seconds after the commit on an overloaded machine.
    const commits = await sql<{ id: string; ms: number }>`
      SELECT id::text AS id, extract(epoch FROM created_at)::float8 * 1000 AS ms
      FROM orders WHERE id = ANY(${ids}::uuid[])`.execute(orders);
    const committedAt = new Map(commits.rows.map((row) => [row.id, row.ms]));
    const toKafkaMs = ids.map(
      (id) => (appendedAt.get(id) ?? Number.NaN) - (committedAt.get(id) ?? Number.NaN),
    );
    const toHandledMs = handled.rows.map((row) => row.ms - (committedAt.get(row.id) ?? Number.NaN));
    return {
      rate,
      mode,
      offeredRate: load.offeredRate,
      orders: ids.length,
      failed: load.failed,
      failures: [...load.failures].map(([reason, n]) => `${reason} ×${n}`).join(', '),
      responseMs: load.responseMs,
      toKafkaMs,
      toHandledMs,
      cpu,
    };
  };

  const runs: Run[] = [];
  let generation = 0;
  try {
    for (const rate of settings.latencyRates) {
      for (const mode of ['notify', 'polling'] as const) {
        const workers = await workersFor(mode, ++generation);
        // Warm-up at the same rate (JIT, connection pools, the consumer's fetch loop): not counted.
        await measure(rate, Math.min(2, settings.latencySeconds), mode, workers);
        const run = await measure(rate, settings.latencySeconds, mode, workers);
        runs.push(run);
        ctx.log(
          `B3 ${rate}/s ${mode}: commit→Kafka p50 ${fixed(percentile(run.toKafkaMs, 50), 1)} p99 ${fixed(percentile(run.toKafkaMs, 99), 1)} ms; commit→handled p50 ${fixed(percentile(run.toHandledMs, 50), 1)} p99 ${fixed(percentile(run.toHandledMs, 99), 1)} ms`,
        );
        await Promise.all(workers.map((w) => w.stop()));
      }
    }
  } finally {
    await consumer.disconnect();
    await Promise.all([api.stop(), inboxWriter.stop()]);
    await Promise.all([payments.destroy(), orders.destroy()]);
  }

  const ms = (values: readonly number[], p: number) => fixed(percentile(values, p), 1);
  const target1000 = runs.find((r) => r.mode === 'notify' && r.rate === 1000);
  const targets: Target[] = target1000
    ? [
        {
          name: 'p99 commit → Kafka ≤ 50 ms at 1000 orders/s, NOTIFY',
          goal: '≤ 50 ms',
          measured: `${ms(target1000.toKafkaMs, 99)} ms`,
          met: percentile(target1000.toKafkaMs, 99) <= 50,
        },
      ]
    : [];
  return {
    id: 'B3',
    title: 'Latency: commit → Kafka append and commit → handled by payment-service',
    tables: [
      {
        headers: [
          'offered/s',
          'wake-up',
          'sent/s',
          'orders',
          'failed',
          'HTTP p50 / p99 ms',
          'commit→Kafka p50 / p95 / p99 / max ms',
          'commit→handled p50 / p95 / p99 / max ms',
        ],
        rows: runs.map((r) => [
          String(r.rate),
          r.mode,
          int(r.offeredRate),
          int(r.orders),
          r.failed === 0 ? '0' : `${r.failed} (${r.failures})`,
          `${ms(r.responseMs, 50)} / ${ms(r.responseMs, 99)}`,
          `${ms(r.toKafkaMs, 50)} / ${ms(r.toKafkaMs, 95)} / ${ms(r.toKafkaMs, 99)} / ${ms(r.toKafkaMs, 100)}`,
          `${ms(r.toHandledMs, 50)} / ${ms(r.toHandledMs, 95)} / ${ms(r.toHandledMs, 99)} / ${ms(r.toHandledMs, 100)}`,
        ]),
      },
      cpuTable({
        caption:
          'Where the CPU went while the load was offered (CPU-seconds per second = cores in use; bench = this process: the HTTP load and the topic reader)',
        first: 'run',
        groups: CPU_GROUPS,
        measure: 'CPU-s per s',
        unit: 1,
        variants: runs.map((r) => ({
          name: `${r.rate}/s ${r.mode}`,
          runs: [{ cpu: r.cpu, work: r.cpu.wallSeconds }],
        })),
      }),
    ],
    notes: [
      `${settings.latencySeconds} s per run after a short unmeasured warm-up at the same rate; open-loop HTTP load from the bench process.`,
      "Processes: order-service api and relay, payment-service consumer (inbox writer) and processor, each its own process with the services' defaults except RELAY_BATCH_SIZE=" +
        `${settings.batchSize}. Polling alone: relay every 500 ms (RELAY_POLL_INTERVAL_MS default), processor every 1000 ms (library default).`,
      '"Commit" is conservatively the write transaction\'s start (`orders.created_at = now()`), so each latency includes that transaction\'s own few milliseconds; "Kafka" is the broker\'s append timestamp (topic `message.timestamp.type=LogAppendTime`); "handled" is `inbox_event.processed_at`, the start of the processor\'s transaction for that row.',
    ],
    targets,
  };
}
