import { createEnvReader, readServiceConfig, type ServiceConfig } from '@outbox-inbox/service-kit';

/** The shared settings (database, Kafka, HTTP, relay; see service-kit) plus payment-service's own. */
export interface PaymentServiceConfig extends ServiceConfig {
  readonly processor: {
    readonly concurrency: number;
    /** LISTEN for the inbox writer's NOTIFY; false leaves the processor on polling alone. */
    readonly notify: boolean;
    readonly maxAttempts: number;
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
export function parseConfig(
  env: NodeJS.ProcessEnv,
  options: { needsKafka: boolean },
): PaymentServiceConfig {
  const read = createEnvReader(env);
  return Object.freeze({
    ...readServiceConfig(read, {
      name: 'payment-service',
      port: 3002,
      needsKafka: options.needsKafka,
    }),
    processor: Object.freeze({
      concurrency: read.integer('PROCESSOR_CONCURRENCY', { default: 2, min: 1, max: 64 }),
      notify: read.oneOf('PROCESSOR_NOTIFY', ['true', 'false'], 'true') === 'true',
      maxAttempts: read.integer('PROCESSOR_MAX_ATTEMPTS', { default: 5, min: 1, max: 100 }),
    }),
    payments: Object.freeze({
      amountLimit: read.integer('PAYMENT_AMOUNT_LIMIT', { default: 100_000, min: 0 }),
      latencyMs: read.integer('PAYMENT_LATENCY_MS', { default: 0, min: 0, max: 60_000 }),
    }),
  });
}
