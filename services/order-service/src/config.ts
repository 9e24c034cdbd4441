import {
  createEnvReader,
  readServiceConfig,
  type EnvReader,
  type ServiceConfig,
} from '@outbox-inbox/service-kit';
import { ORDER_API_MAX_IN_FLIGHT } from './orders/order-group-commit.ts';

/** The shared settings (database, Kafka, HTTP, relay, retention; see service-kit) plus order-service's own. */
export interface OrderServiceConfig extends ServiceConfig {
  /**
   * The retry window of `Idempotency-Key`: a key is remembered this long after its first
   * request, then the retention role deletes it and a retry with it creates a new order.
   */
  readonly idempotencyKeyWindowMs: number;
}

/**
 * Reads the configuration once, at start-up. Throws a ConfigError naming the first bad
 * variable. Kafka settings are required only when a role that needs Kafka runs.
 */
export function readConfig(read: EnvReader, options: { needsKafka: boolean }): OrderServiceConfig {
  return Object.freeze({
    ...readServiceConfig(read, {
      name: 'order-service',
      port: 3001,
      needsKafka: options.needsKafka,
      apiMaxInFlight: ORDER_API_MAX_IN_FLIGHT,
    }),
    idempotencyKeyWindowMs:
      1000 *
      read.integer('RETENTION_IDEMPOTENCY_KEY_WINDOW_SECONDS', {
        default: 86_400,
        min: 1,
        max: 3650 * 86_400,
      }),
  });
}

/** {@link readConfig} from an environment (`process.env`, or a test's own). */
export function parseConfig(
  env: NodeJS.ProcessEnv,
  options: { needsKafka: boolean },
): OrderServiceConfig {
  return readConfig(createEnvReader(env), options);
}
