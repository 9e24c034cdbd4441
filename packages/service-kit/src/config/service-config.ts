import { DEFAULT_STALL_AFTER_MS } from '@outbox-inbox/outbox/ops';
import { kafkaClientNames, type KafkaClientName } from '../infrastructure/kafka.ts';
import { readRetentionConfig, type RetentionConfig } from '../retention/retention-config.ts';
import {
  defaultAnswerWithinMs,
  type AdmissionOptions,
} from '../http/admission/request-admission.ts';
import { API_ROLE } from '../roles/roles.ts';
import { ConfigError, type EnvReader } from './env-reader.ts';

/**
 * The settings every service reads the same way: database, Kafka, HTTP listener, logging and
 * the outbox relay. A service's own config extends this with its domain settings.
 */
export interface ServiceConfig {
  readonly databaseUrl: string;
  readonly databasePoolSize: number;
  /**
   * Where the connections that need a session of their own go (`DATABASE_SESSION_URL`, else
   * DATABASE_URL): the relay's and the inbox processor's LISTEN, and Debezium's replication
   * connection in CDC mode. PostgreSQL itself or a pooler in session mode; a pooler in
   * transaction mode hands the server connection to other clients once the LISTEN has run.
   */
  readonly databaseSessionUrl: string;
  /** Send repeated statements as named prepared statements (`DATABASE_PREPARE_STATEMENTS`). */
  readonly databasePrepareStatements: boolean;
  /** Empty when no role of this process talks to Kafka. */
  readonly kafkaBrokers: readonly string[];
  readonly host: string;
  /** Port of the api role. */
  readonly port: number;
  /**
   * The api's admission: requests running at once (`API_MAX_IN_FLIGHT`, default the pool size less two)
   * and the longest wait for a slot before a 503 (`API_ADMISSION_WAIT_MS`), by at most how many
   * requests at once (`API_MAX_WAITING`, default as many as run), and the answer bound
   * (`API_ANSWER_WITHIN_MS`) near which work that can still be rolled back is refused.
   */
  readonly admission: AdmissionOptions;
  /** Health + metrics port of a process without the api role; none when unset. */
  readonly opsPort: number | undefined;
  readonly logLevel: string;
  readonly kafkaClientId: string;
  /** Which Kafka client library the port runs on (`KAFKA_CLIENT`). */
  readonly kafkaClient: KafkaClientName;
  readonly consumerGroupId: string;
  /** A worker with work and no progress for this long is reported stalled (degraded readiness). */
  readonly stallAfterMs: number;
  readonly relay: {
    readonly batchSize: number;
    readonly pollIntervalMs: number;
    /** LISTEN for the NOTIFY issued at commit; false leaves the relay on polling alone. */
    readonly notify: boolean;
  } & (
    | { readonly mode: 'polling' }
    /** Debezium on Kafka Connect publishes; the relay role registers and watches it. */
    | { readonly mode: 'cdc'; readonly connectUrl: string }
  );
  /** The retention role's schedule and windows. */
  readonly retention: RetentionConfig;
  /**
   * OTLP/HTTP base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`, spans go to `<url>/v1/traces`); no
   * tracer is registered when unset.
   */
  readonly otlpEndpoint: string | undefined;
}

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Reads the shared settings, with the service's own defaults (its port and its name as Kafka
 * client and consumer group), so every service names and validates them identically. Kafka
 * brokers are required only when a role that needs Kafka runs.
 */
export function readServiceConfig(
  read: EnvReader,
  defaults: {
    name: string;
    port: number;
    needsKafka: boolean;
    /**
     * The api's requests at once when `API_MAX_IN_FLIGHT` is unset, for an api whose requests
     * share connections (order-service commits them in groups); otherwise the pool size less two.
     */
    apiMaxInFlight?: number;
  },
): ServiceConfig {
  const databaseUrl = read.url('DATABASE_URL', ['postgres', 'postgresql']);
  const databasePoolSize = read.integer('DATABASE_POOL_SIZE', { default: 10, min: 1, max: 100 });
  // One connection per running request, and two spare: one for the readiness probe (so it
  // tells an overloaded api from an unreachable database) and one for the relays' wake-up
  // after each commit. More requests would only wait inside the pool, unrefusable.
  const apiMaxInFlight = read.integer('API_MAX_IN_FLIGHT', {
    default: defaults.apiMaxInFlight ?? Math.max(1, databasePoolSize - 2),
    min: 1,
    max: 10_000,
  });
  return {
    databaseUrl,
    databaseSessionUrl:
      read.optionalUrl('DATABASE_SESSION_URL', ['postgres', 'postgresql']) ?? databaseUrl,
    databasePoolSize,
    databasePrepareStatements:
      read.oneOf('DATABASE_PREPARE_STATEMENTS', ['true', 'false'], 'true') === 'true',
    kafkaBrokers: Object.freeze(defaults.needsKafka ? read.list('KAFKA_BROKERS') : []),
    host: read.string('HOST', '0.0.0.0'),
    port: read.integer('PORT', { default: defaults.port, min: 0, max: 65535 }),
    opsPort: read.optionalInteger('OPS_PORT', { min: 0, max: 65535 }),
    admission: readAdmission(read, apiMaxInFlight),
    logLevel: read.oneOf('LOG_LEVEL', logLevels, 'info'),
    kafkaClientId: read.string('KAFKA_CLIENT_ID', defaults.name),
    kafkaClient: read.oneOf('KAFKA_CLIENT', kafkaClientNames, 'kafkajs'),
    consumerGroupId: read.string('CONSUMER_GROUP_ID', defaults.name),
    stallAfterMs: read.integer('WORKER_STALL_AFTER_MS', {
      default: DEFAULT_STALL_AFTER_MS,
      min: 1000,
      max: 3_600_000,
    }),
    relay: readRelayConfig(read),
    retention: readRetentionConfig(read),
    otlpEndpoint: read.optionalUrl('OTEL_EXPORTER_OTLP_ENDPOINT', ['http', 'https']),
  };
}

/** The api's admission (`API_*`): the answer bound must leave room after the wait for a slot. */
function readAdmission(read: EnvReader, maxInFlight: number): AdmissionOptions {
  const maxWaitMs = read.integer('API_ADMISSION_WAIT_MS', { default: 300, min: 0, max: 60_000 });
  return Object.freeze({
    maxInFlight,
    maxWaitMs,
    maxWaiting: read.integer('API_MAX_WAITING', { default: maxInFlight, min: 0, max: 10_000 }),
    retryAfterSeconds: 1,
    answerWithinMs: read.integer('API_ANSWER_WITHIN_MS', {
      default: defaultAnswerWithinMs,
      min: maxWaitMs + 1,
      max: 120_000,
    }),
  });
}

/** The outbox relay's settings (`RELAY_*`, and CONNECT_URL in CDC mode). */
function readRelayConfig(read: EnvReader): ServiceConfig['relay'] {
  return Object.freeze({
    batchSize: read.integer('RELAY_BATCH_SIZE', { default: 200, min: 1, max: 10_000 }),
    pollIntervalMs: read.integer('RELAY_POLL_INTERVAL_MS', {
      default: 500,
      min: 10,
      max: 60_000,
    }),
    notify: read.oneOf('RELAY_NOTIFY', ['true', 'false'], 'true') === 'true',
    ...readRelayMode(read),
  });
}

/** RELAY_MODE, and CONNECT_URL, read whatever the mode (so it is listed) and required by `cdc`. */
function readRelayMode(
  read: EnvReader,
): { readonly mode: 'polling' } | { readonly mode: 'cdc'; readonly connectUrl: string } {
  const mode = read.oneOf('RELAY_MODE', ['polling', 'cdc'], 'polling');
  const connectUrl = read.optionalUrl('CONNECT_URL', ['http', 'https']);
  if (mode === 'polling') return { mode };
  if (connectUrl === undefined) {
    throw new ConfigError('CONNECT_URL', 'is required with RELAY_MODE=cdc');
  }
  return { mode, connectUrl };
}

/** Where a role process finds its database and Kafka, and where it listens. */
export interface ServiceWiring {
  readonly databaseUrl: string;
  readonly kafkaBrokers: readonly string[];
  readonly host: string;
  /**
   * The role, or roles separated by commas, the process runs. With the api among them it
   * listens on PORT; without, it serves health and metrics on OPS_PORT.
   */
  readonly role: string;
  readonly port: number;
  readonly logLevel: string;
}

/**
 * The variables {@link readServiceConfig} reads for the wiring: what a launcher sets for each
 * role process, so the names are written in this file alone.
 */
export function wiringEnv(wiring: ServiceWiring): Record<string, string> {
  return {
    DATABASE_URL: wiring.databaseUrl,
    KAFKA_BROKERS: wiring.kafkaBrokers.join(','),
    HOST: wiring.host,
    [wiring.role.split(',').includes(API_ROLE) ? 'PORT' : 'OPS_PORT']: String(wiring.port),
    LOG_LEVEL: wiring.logLevel,
  };
}
