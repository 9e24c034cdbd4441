import { topicDeclarations } from '@outbox-inbox/contracts';
import { migrateService } from '@outbox-inbox/launcher';
import { orderService } from '@outbox-inbox/order-service';
import type { OutboxTables } from '@outbox-inbox/outbox';
import {
  handleOrderCancelled,
  handleOrderCreated,
  paymentService,
  simulatedGateway,
  type PaymentDatabase,
} from '@outbox-inbox/payment-service';
import type { Kysely } from 'kysely';
import type { BenchContext } from '../../context.ts';
import { serverGroups } from '../../cpu.ts';
import { benchDb } from '../../database.ts';
import { freshTopics } from '../../kafka.ts';
import { startNaiveRelay } from '../../naive-relay.ts';
import { startRole, type RoleHandle } from '../../services.ts';
import { startGuideProcessor } from './guide-processor.ts';

/** One system B7 measures: the library's roles, or the style guide's relay and processor. */
export interface CapacityVariant {
  readonly name: string;
  readonly design: 'library' | 'guide';
  /** The payment provider's simulated call (`PAYMENT_LATENCY_MS`). */
  readonly providerMs: number;
  /**
   * `role` (the default): every role its own process, as `pnpm dev` runs them; `service`: one
   * process per service running all its roles on one pool and one Kafka client.
   */
  readonly processes?: 'role' | 'service';
  /** `KAFKA_CLIENT` of every role (kafkajs unless set). */
  readonly kafkaClient?: 'kafkajs' | 'platformatic';
  /** More service settings for every role (for trying a setting on its own). */
  readonly settings?: Readonly<Record<string, string>>;
}

export interface CapacitySystem {
  readonly apiUrl: string;
  readonly orders: Kysely<OutboxTables>;
  readonly payments: Kysely<OutboxTables>;
  /** Process trees to count CPU for, by name (the guide's in-process parts count as bench). */
  cpuGroups(): Record<string, number | undefined>;
  stop(): Promise<void>;
}

interface Parts {
  readonly roles: RoleHandle[];
  readonly stops: (() => Promise<void>)[];
}

/** The guide's design as written: its relays and processor in this process. */
async function startGuideParts(
  ctx: BenchContext,
  variant: CapacityVariant,
  dbs: { orders: Kysely<OutboxTables>; payments: Kysely<OutboxTables> },
  paymentsUrl: string,
): Promise<Parts> {
  const relays = await Promise.all([
    startNaiveRelay({ db: dbs.orders, kafka: ctx.kafka, asWritten: true }),
    startNaiveRelay({ db: dbs.payments, kafka: ctx.kafka, asWritten: true }),
  ]);
  const processorDb = benchDb<PaymentDatabase>(paymentsUrl);
  const processor = await startGuideProcessor<PaymentDatabase>({
    db: processorDb,
    handlers: {
      OrderCreated: handleOrderCreated(
        simulatedGateway({ amountLimit: 100_000, latencyMs: variant.providerMs }),
      ),
      OrderCancelled: handleOrderCancelled(),
    },
  });
  return {
    roles: [],
    stops: [
      ...relays.map((relay) => () => relay.stop()),
      () => processor.stop(),
      () => processorDb.destroy(),
    ],
  };
}

/** Databases and topics of one variant, fresh: each variant starts from empty tables and topics. */
async function prepare(ctx: BenchContext, index: number) {
  const ordersUrl = await ctx.stack.createDatabase(`bench_b7_${index}_orders`);
  const paymentsUrl = await ctx.stack.createDatabase(`bench_b7_${index}_payments`);
  await migrateService(orderService, ordersUrl);
  await migrateService(paymentService, paymentsUrl);
  await freshTopics(
    ctx.kafka,
    topicDeclarations.map((topic) => ({ topic: topic.name, partitions: topic.partitions })),
  );
  return { ordersUrl, paymentsUrl };
}

/**
 * The variant's role processes, the order api first: one per role, or with `processes: 'service'`
 * one per service; the guide's variant starts only the api and the consumers.
 */
function startRoles(
  ctx: BenchContext,
  variant: CapacityVariant,
  index: number,
  urls: { ordersUrl: string; paymentsUrl: string },
): Promise<RoleHandle[]> {
  /** `roles` run in one process, named `<service>-<label>` (its CPU group in the tables). */
  const role = (
    service: typeof orderService | typeof paymentService,
    roles: string,
    label = roles,
  ) =>
    startRole(ctx.stack, {
      component: `b7-${index}-${service.componentPrefix}-${label}`,
      service,
      role: roles,
      databaseUrl: service === orderService ? urls.ordersUrl : urls.paymentsUrl,
      settings: {
        PAYMENT_LATENCY_MS: String(variant.providerMs),
        KAFKA_CLIENT: variant.kafkaClient ?? 'kafkajs',
        ...variant.settings,
      },
    });
  const perService = variant.design === 'library' && variant.processes === 'service';
  return Promise.all(
    perService
      ? [
          role(orderService, 'api,relay,consumer', 'service'),
          role(paymentService, 'consumer,processor,relay', 'service'),
        ]
      : [
          role(orderService, 'api'),
          role(orderService, 'consumer'),
          role(paymentService, 'consumer'),
          ...(variant.design === 'library'
            ? [
                role(orderService, 'relay'),
                role(paymentService, 'processor'),
                role(paymentService, 'relay'),
              ]
            : []),
        ],
  );
}

/**
 * Starts every role of both services as its own process, as `pnpm dev` runs them (the guide's
 * variant swaps the relays and the processor for the guide's), on fresh databases and topics.
 */
export async function startCapacitySystem(
  ctx: BenchContext,
  variant: CapacityVariant,
  index: number,
): Promise<CapacitySystem> {
  const { ordersUrl, paymentsUrl } = await prepare(ctx, index);
  const orders = benchDb<OutboxTables>(ordersUrl);
  const payments = benchDb<OutboxTables>(paymentsUrl);
  const roles = await startRoles(ctx, variant, index, { ordersUrl, paymentsUrl });
  const guide =
    variant.design === 'guide'
      ? await startGuideParts(ctx, variant, { orders, payments }, paymentsUrl)
      : { roles: [], stops: [] };
  const api = roles[0];
  if (api === undefined) throw new Error('B7: the order api did not start');
  return {
    apiUrl: api.url,
    orders,
    payments,
    cpuGroups: () => ({
      ...Object.fromEntries(roles.map((r) => [r.component.replace(`b7-${index}-`, ''), r.pid()])),
      ...serverGroups(ctx.stack),
    }),
    async stop() {
      for (const stop of guide.stops) await stop();
      await Promise.all(roles.map((r) => r.stop()));
      await Promise.all([orders.destroy(), payments.destroy()]);
    },
  };
}
