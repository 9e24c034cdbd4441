import { createEnvReader, readServiceConfig, type ServiceConfig } from '@outbox-inbox/service-kit';

/** The shared settings (database, Kafka, HTTP, relay; see service-kit) plus order-service's own. */
export interface OrderServiceConfig extends ServiceConfig {
  /**
   * BENCHMARK ONLY (`pnpm bench`, B4): `POST /orders` writes the order row without its outbox
   * row, to measure what the outbox insert costs. Breaks R-DIST-OBX-1; never set it elsewhere.
   */
  readonly benchmarkSkipOutbox: boolean;
}

/**
 * Reads the configuration once, at start-up. Throws a ConfigError naming the first bad
 * variable. Kafka settings are required only when a role that needs Kafka runs.
 */
export function parseConfig(
  env: NodeJS.ProcessEnv,
  options: { needsKafka: boolean },
): OrderServiceConfig {
  const read = createEnvReader(env);
  return Object.freeze({
    ...readServiceConfig(read, {
      name: 'order-service',
      port: 3001,
      needsKafka: options.needsKafka,
    }),
    benchmarkSkipOutbox: read.oneOf('BENCHMARK_SKIP_OUTBOX', ['true', 'false'], 'false') === 'true',
  });
}
