import { migrateService } from '@outbox-inbox/launcher';
import { orderService } from '@outbox-inbox/order-service';
import { paymentService } from '@outbox-inbox/payment-service';
import type { Consumer } from 'kafkajs';
import type { Kysely } from 'kysely';
import type { BenchContext } from '../../context.ts';
import { benchDb } from '../../database.ts';
import { freshTopics } from '../../kafka.ts';
import { startRole, type RoleHandle } from '../../services.ts';

export const ORDER_TOPIC = 'order.events';
const PAYMENT_TOPIC = 'payment.events';

export type WakeUp = 'notify' | 'polling';

/** A database handle for raw `sql` reads: no table types, each query says what it selects. */
type SqlOnlyDb = Kysely<Record<string, never>>;

/** B3's system: the api and the inbox writer for every run, read-only handles on both databases. */
export interface LatencyBench {
  readonly ctx: BenchContext;
  readonly ordersUrl: string;
  readonly paymentsUrl: string;
  readonly orders: SqlOnlyDb;
  readonly payments: SqlOnlyDb;
  readonly api: RoleHandle;
  readonly inboxWriter: RoleHandle;
  /** When Kafka appended each order's event (the broker's LogAppendTime), by order id. */
  readonly appendedAt: ReadonlyMap<string, number>;
  readonly reader: Consumer;
  /** Inbox rows processed by the end of the last run (warm-ups included). */
  handledSoFar: number;
}

/** Reads order.events from the bench process, noting each order's append time. */
export async function startAppendReader(ctx: BenchContext, appendedAt: Map<string, number>) {
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
  return consumer;
}

export async function setUpLatency(ctx: BenchContext): Promise<LatencyBench> {
  const { stack } = ctx;
  const ordersUrl = await stack.createDatabase('bench_latency_orders');
  const paymentsUrl = await stack.createDatabase('bench_latency_payments');
  await migrateService(orderService, ordersUrl);
  await migrateService(paymentService, paymentsUrl);
  await freshTopics(ctx.kafka, [
    { topic: ORDER_TOPIC, partitions: 3, logAppendTime: true },
    { topic: PAYMENT_TOPIC, partitions: 3 },
  ]);
  const appendedAt = new Map<string, number>();
  const reader = await startAppendReader(ctx, appendedAt);
  const [api, inboxWriter] = await Promise.all([
    startRole(stack, {
      component: 'b3-order-api',
      service: orderService,
      role: 'api',
      databaseUrl: ordersUrl,
    }),
    startRole(stack, {
      component: 'b3-payment-consumer',
      service: paymentService,
      role: 'consumer',
      databaseUrl: paymentsUrl,
    }),
  ]);
  const orders: SqlOnlyDb = benchDb(ordersUrl);
  const payments: SqlOnlyDb = benchDb(paymentsUrl);
  return {
    ...{ ctx, ordersUrl, paymentsUrl, orders, payments, api, inboxWriter, appendedAt, reader },
    handledSoFar: 0,
  };
}

/** A fresh relay and processor for one run, woken by NOTIFY or by polling alone. */
export async function startWorkers(
  bench: LatencyBench,
  wakeUp: WakeUp,
  generation: number,
): Promise<RoleHandle[]> {
  const notify = wakeUp === 'notify' ? 'true' : 'false';
  return Promise.all([
    startRole(bench.ctx.stack, {
      component: `b3-order-relay-${wakeUp}-${generation}`,
      service: orderService,
      role: 'relay',
      databaseUrl: bench.ordersUrl,
      settings: { RELAY_NOTIFY: notify, RELAY_BATCH_SIZE: String(bench.ctx.settings.batchSize) },
    }),
    startRole(bench.ctx.stack, {
      component: `b3-payment-processor-${wakeUp}-${generation}`,
      service: paymentService,
      role: 'processor',
      databaseUrl: bench.paymentsUrl,
      settings: { PROCESSOR_NOTIFY: notify },
    }),
  ]);
}

export async function tearDownLatency(bench: LatencyBench): Promise<void> {
  await bench.reader.disconnect();
  await Promise.all([bench.api.stop(), bench.inboxWriter.stop()]);
  await Promise.all([bench.payments.destroy(), bench.orders.destroy()]);
}
