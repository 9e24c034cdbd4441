import { createEnvReader } from '@outbox-inbox/service-kit';

export interface OrderServiceConfig {
  readonly databaseUrl: string;
  readonly databasePoolSize: number;
  /** Empty when no role of this process talks to Kafka (the api alone). */
  readonly kafkaBrokers: readonly string[];
  readonly host: string;
  /** Port of the api role. */
  readonly port: number;
  /** Health + metrics port of a process without the api role; none when unset. */
  readonly opsPort: number | undefined;
  readonly logLevel: string;
  readonly kafkaClientId: string;
  readonly consumerGroupId: string;
  readonly relay: {
    readonly batchSize: number;
    readonly pollIntervalMs: number;
    /** LISTEN for the NOTIFY issued at commit; false leaves the relay on polling alone. */
    readonly notify: boolean;
    /** Fault injection for the e2e suite: chance that the relay SIGKILLs itself after a send. */
    readonly crashAfterPublish: number;
  };
  /**
   * BENCHMARK ONLY (`pnpm bench`, B4): `POST /orders` writes the order row without its outbox
   * row, to measure what the outbox insert costs. Breaks R-DIST-OBX-1; never set it elsewhere.
   */
  readonly benchmarkSkipOutbox: boolean;
}

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

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
    databaseUrl: read.url('DATABASE_URL', ['postgres', 'postgresql']),
    databasePoolSize: read.integer('DATABASE_POOL_SIZE', { default: 10, min: 1, max: 100 }),
    kafkaBrokers: Object.freeze(options.needsKafka ? read.list('KAFKA_BROKERS') : []),
    host: read.string('HOST', '0.0.0.0'),
    port: read.integer('PORT', { default: 3001, min: 0, max: 65535 }),
    opsPort: read.optionalInteger('OPS_PORT', { min: 0, max: 65535 }),
    logLevel: read.oneOf('LOG_LEVEL', logLevels, 'info'),
    kafkaClientId: read.string('KAFKA_CLIENT_ID', 'order-service'),
    consumerGroupId: read.string('CONSUMER_GROUP_ID', 'order-service'),
    relay: Object.freeze({
      batchSize: read.integer('RELAY_BATCH_SIZE', { default: 200, min: 1, max: 10_000 }),
      pollIntervalMs: read.integer('RELAY_POLL_INTERVAL_MS', {
        default: 500,
        min: 10,
        max: 60_000,
      }),
      notify: read.oneOf('RELAY_NOTIFY', ['true', 'false'], 'true') === 'true',
      crashAfterPublish: read.probability('FAULT_CRASH_AFTER_PUBLISH', 0),
    }),
    benchmarkSkipOutbox: read.oneOf('BENCHMARK_SKIP_OUTBOX', ['true', 'false'], 'false') === 'true',
  });
}
