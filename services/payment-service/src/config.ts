import { DEFAULT_INBOX_PROCESSOR_OPTIONS } from '@outbox-inbox/outbox';
import {
  createEnvReader,
  readServiceConfig,
  type EnvReader,
  type ServiceConfig,
} from '@outbox-inbox/service-kit';

/** The shared settings (database, Kafka, HTTP, relay; see service-kit) plus payment-service's own. */
export interface PaymentServiceConfig extends ServiceConfig {
  readonly processor: {
    readonly concurrency: number;
    readonly batchSize: number;
    /** LISTEN for the inbox writer's NOTIFY; false leaves the processor on polling alone. */
    readonly notify: boolean;
    readonly maxAttempts: number;
    /** Longest one handler attempt may run before it fails (and counts as an attempt). */
    readonly handlerTimeoutMs: number;
  };
  readonly payments: {
    /** Orders above this amount (minor units) fail: the simulated gateway's deterministic rule. */
    readonly amountLimit: number;
    /** Simulated gateway latency per payment: shows the inbox absorbing a burst. */
    readonly latencyMs: number;
  };
}

/**
 * Reads the configuration once, at start-up. Throws a ConfigError naming the first bad
 * variable. Kafka settings are required only when a role that needs Kafka runs.
 */
export function readConfig(
  read: EnvReader,
  options: { needsKafka: boolean },
): PaymentServiceConfig {
  return Object.freeze({
    ...readServiceConfig(read, {
      name: 'payment-service',
      port: 3002,
      needsKafka: options.needsKafka,
    }),
    processor: Object.freeze({
      // The provider call holds no connection (see handle-order-created.ts): a worker waiting on
      // it costs a promise. Calls in flight are at most concurrency × batchSize.
      concurrency: read.integer('PROCESSOR_CONCURRENCY', { default: 16, min: 1, max: 64 }),
      // Rows one worker claims and commits at once, each in a savepoint (see processor-options.ts in the library).
      batchSize: read.integer('PROCESSOR_BATCH_SIZE', {
        default: DEFAULT_INBOX_PROCESSOR_OPTIONS.batchSize,
        min: 1,
        max: 64,
      }),
      notify: read.oneOf('PROCESSOR_NOTIFY', ['true', 'false'], 'true') === 'true',
      maxAttempts: read.integer('PROCESSOR_MAX_ATTEMPTS', { default: 5, min: 1, max: 100 }),
      // Below the processor's statement timeout, which also ends an idle handler transaction.
      handlerTimeoutMs: read.integer('PROCESSOR_HANDLER_TIMEOUT_MS', {
        default: DEFAULT_INBOX_PROCESSOR_OPTIONS.handlerTimeoutMs,
        min: 100,
        max: DEFAULT_INBOX_PROCESSOR_OPTIONS.statementTimeoutMs - 1,
      }),
    }),
    payments: Object.freeze({
      amountLimit: read.integer('PAYMENT_AMOUNT_LIMIT', { default: 100_000, min: 0 }),
      latencyMs: read.integer('PAYMENT_LATENCY_MS', { default: 0, min: 0, max: 60_000 }),
    }),
  });
}

/** {@link readConfig} from an environment (`process.env`, or a test's own). */
export function parseConfig(
  env: NodeJS.ProcessEnv,
  options: { needsKafka: boolean },
): PaymentServiceConfig {
  return readConfig(createEnvReader(env), options);
}
