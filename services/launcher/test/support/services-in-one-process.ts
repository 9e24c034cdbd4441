import { randomUUID } from 'node:crypto';
import { Stack } from '@outbox-inbox/infra';
// Declares the `stackName` the global setup provides.
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import {
  orderService,
  parseConfig as parseOrderConfig,
  type OrderDatabase,
} from '@outbox-inbox/order-service';
import {
  parseConfig as parsePaymentConfig,
  paymentService,
  type PaymentDatabase,
} from '@outbox-inbox/payment-service';
import type { OutboxTables } from '@outbox-inbox/outbox';
import { removeCdcRelay } from '@outbox-inbox/outbox/cdc';
import { createDatabase } from '@outbox-inbox/service-kit';
import { Kafka, logLevel } from 'kafkajs';
import type { Kysely } from 'kysely';
import { pino, type Logger } from 'pino';
import type { RunningService } from '@outbox-inbox/service-kit';
import { inject } from 'vitest';
import { migrateService } from '../../src/system/migrate-service.ts';

export interface InProcessSystem {
  readonly stack: Stack;
  readonly orders: RunningService;
  readonly payments: RunningService;
  /** Direct access for assertions (and for injecting rows no API would write). */
  readonly orderDb: Kysely<OrderDatabase>;
  readonly paymentDb: Kysely<PaymentDatabase>;
  readonly kafka: Kafka;
  readonly paymentAmountLimit: number;
  stop(): Promise<void>;
}

/**
 * Both services with every role in this process (the one-process deployment), configured
 * through the same env parsing as `main.ts`, on fresh databases of the run's stack.
 */
export async function startServicesInOneProcess(
  options: {
    readonly logger?: Logger;
    /** `cdc`: Kafka Connect (added to the stack) publishes both outboxes, not the relays. */
    readonly relayMode?: 'polling' | 'cdc';
    /** Rows per processor claim (the service's default when absent). */
    readonly processorBatchSize?: number;
  } = {},
): Promise<InProcessSystem> {
  const stack = Stack.open(inject('stackName'));
  const suffix = randomUUID().slice(0, 8);
  const cdc = options.relayMode === 'cdc';
  if (cdc) await stack.addServer('connect');
  const orderUrl = await stack.createDatabase(`flow_orders_${suffix}`);
  const paymentUrl = await stack.createDatabase(`flow_payments_${suffix}`);
  const logger = options.logger ?? pino({ level: process.env['FLOW_LOG_LEVEL'] ?? 'error' });
  // Migrated as a deployment is, topics included: each service's topics exist as its
  // contract declares them (six partitions), whichever test file created them first.
  await migrateService(orderService, orderUrl, stack.kafkaBrokers);
  await migrateService(paymentService, paymentUrl, stack.kafkaBrokers);
  const kafka = new Kafka({
    clientId: 'flow-test',
    brokers: stack.kafkaBrokers,
    logLevel: logLevel.NOTHING,
  });

  const paymentAmountLimit = 100_000;
  const common = {
    KAFKA_BROKERS: stack.kafkaBrokers.join(','),
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: process.env['FLOW_LOG_LEVEL'] ?? 'error',
    RELAY_POLL_INTERVAL_MS: '200',
    ...(cdc ? { RELAY_MODE: 'cdc', CONNECT_URL: stack.connectUrl } : {}),
  };
  const orders = await orderService.start({
    config: parseOrderConfig(
      {
        ...common,
        DATABASE_URL: orderUrl,
        CONSUMER_GROUP_ID: `flow-orders-${suffix}`,
        // Names the CDC connector: one per system on the shared stack.
        KAFKA_CLIENT_ID: `flow-orders-${suffix}`,
      },
      { needsKafka: true },
    ),
    roles: orderService.roles,
    logger: logger.child({ service: 'order-service' }),
  });
  const payments = await paymentService.start({
    config: parsePaymentConfig(
      {
        ...common,
        DATABASE_URL: paymentUrl,
        // Each service is its own consumer group (a shared group would split the topics).
        CONSUMER_GROUP_ID: `flow-payments-${suffix}`,
        KAFKA_CLIENT_ID: `flow-payments-${suffix}`,
        PAYMENT_AMOUNT_LIMIT: String(paymentAmountLimit),
        PROCESSOR_CONCURRENCY: '4',
        ...(options.processorBatchSize === undefined
          ? {}
          : { PROCESSOR_BATCH_SIZE: String(options.processorBatchSize) }),
      },
      { needsKafka: true },
    ),
    roles: paymentService.roles,
    logger: logger.child({ service: 'payment-service' }),
  });
  const orderDb = createDatabase<OrderDatabase>({ url: orderUrl, poolSize: 2, logger });
  const paymentDb = createDatabase<PaymentDatabase>({ url: paymentUrl, poolSize: 2, logger });
  return {
    stack,
    orders,
    payments,
    orderDb,
    paymentDb,
    kafka,
    paymentAmountLimit,
    async stop() {
      await orders.stop();
      await payments.stop();
      if (cdc) {
        // The connectors outlive the services (they are Kafka Connect's); their slots would
        // keep WAL for the rest of the run.
        const remove = <DB extends OutboxTables>(db: Kysely<DB>, clientId: string) =>
          removeCdcRelay({
            db,
            connectUrl: stack.connectUrl,
            connector: { name: `${clientId}-outbox` },
            logger,
          });
        await remove(orderDb, `flow-orders-${suffix}`);
        await remove(paymentDb, `flow-payments-${suffix}`);
      }
      await orderDb.destroy();
      await paymentDb.destroy();
    },
  };
}

/** Reads one counter from a service's /metrics (summing its label sets). */
export async function readCounter(baseUrl: string | undefined, name: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}
