import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ConnectRecord } from '../component-record.ts';
import { findRepoRoot } from '../state-file.ts';
import { findJava } from './kafka.ts';
import { serverJvmOptions } from './jvm.ts';
import { classArchiveOptions } from './jvm-class-archive.ts';
import { resolveMavenJars } from './maven.ts';

/**
 * infra/connect: the Maven project of the worker's jars and the project's own transformation,
 * the settings every worker shares (worker.properties), its logging (log4j.properties) and the
 * image the docker provider and compose run (Dockerfile).
 */
export function connectProjectDir(): string {
  return path.join(findRepoRoot(), 'infra', 'connect');
}

/** Heap of a Kafka Connect worker, local or in a container, unless asked otherwise. */
export const connectHeapMb = 384;

/**
 * Kafka Connect's classpath: connect-runtime, Debezium's PostgreSQL connector and its outbox
 * event router, resolved from Maven Central by infra/connect/pom.xml, plus the project's own
 * transformation that jar builds (infra/connect/src).
 */
export function resolveConnectClasspath(): string {
  const projectDir = connectProjectDir();
  const libs = resolveMavenJars({
    projectDir,
    what: 'Kafka Connect and Debezium',
    goals: ['package'],
    requiredJar: 'debezium-connector-postgres-',
    sources: ['src'],
  });
  return [path.join(projectDir, 'target', 'outbox-connect-1.0.0.jar'), `${libs}/*`].join(
    path.delimiter,
  );
}

/** Where a Kafka Connect worker runs: the Kafka it uses, and where its REST API listens. */
export interface ConnectWorkerPlace {
  readonly brokers: readonly string[];
  readonly port: number;
  /** The interface the REST API listens on: 127.0.0.1 on this machine, 0.0.0.0 in a container. */
  readonly listenHost: string;
  /** How the other workers of its group (and its own REST redirects) reach it. */
  readonly advertisedHost: string;
}

/**
 * The worker settings that depend on where it runs, added to infra/connect/worker.properties
 * (what every worker shares) by the local provider, and given to the image as CONNECT_*
 * variables by the docker provider and the compose files. The worker's topics (its configs,
 * source offsets and connector status, as production runs it) get as many replicas as the
 * cluster has, up to three.
 */
export function connectWorkerSettings(place: ConnectWorkerPlace): Record<string, string> {
  const replicas = String(Math.min(3, place.brokers.length));
  return {
    'bootstrap.servers': place.brokers.join(','),
    listeners: `http://${place.listenHost}:${place.port}`,
    'rest.advertised.host.name': place.advertisedHost,
    'rest.advertised.port': String(place.port),
    'config.storage.replication.factor': replicas,
    'offset.storage.replication.factor': replicas,
    'status.storage.replication.factor': replicas,
  };
}

/** The worker's properties file: what every worker shares, then where this one runs. */
export function connectWorkerProperties(place: ConnectWorkerPlace): string {
  const shared = readFileSync(path.join(connectProjectDir(), 'worker.properties'), 'utf8');
  const settings = Object.entries(connectWorkerSettings(place));
  return [shared, ...settings.map(([key, value]) => `${key}=${value}`), ''].join('\n');
}

/**
 * Kafka Connect as a distributed worker (a group of one here): its configs, offsets and status
 * live in Kafka topics, so a worker that is killed, or replaced, resumes from them.
 */
export function defineConnect(options: {
  dir: string;
  port: number;
  brokers: readonly string[];
  heapMb?: number;
  /** As Kafka's (kafka.ts): the first-tier compiler only, classes mapped from an archive. */
  quickStart?: boolean;
  env?: NodeJS.ProcessEnv;
}): ConnectRecord {
  const { dir, port } = options;
  const java = findJava(options.env ?? process.env);
  const classpath = resolveConnectClasspath();
  const projectDir = connectProjectDir();
  mkdirSync(dir, { recursive: true });
  const configFile = path.join(dir, 'connect-distributed.properties');
  writeFileSync(
    configFile,
    connectWorkerProperties({
      brokers: options.brokers,
      port,
      listenHost: '127.0.0.1',
      advertisedHost: '127.0.0.1',
    }),
  );
  const heapMb = options.heapMb ?? connectHeapMb;
  const url = `http://127.0.0.1:${port}`;
  return {
    name: 'connect',
    kind: 'connect',
    dataDir: dir,
    launch: {
      command: java,
      args: [
        ...serverJvmOptions(heapMb),
        ...(options.quickStart
          ? ['-XX:TieredStopAtLevel=1', ...classArchiveOptions('connect', java, classpath)]
          : []),
        '-cp',
        classpath,
        `-Dlog4j.configuration=file:${path.join(projectDir, 'log4j.properties')}`,
        'org.apache.kafka.connect.cli.ConnectDistributed',
        configFile,
      ],
      cwd: dir,
      env: {},
      logFile: path.join(dir, 'connect.log'),
    },
    // The REST API answers before the worker has joined its group; the list of connectors
    // needs the group's configs, so it answers once the worker can take one.
    readiness: { type: 'http', url: `${url}/connectors` },
    readyTimeoutMs: 120_000,
    stopSignal: 'SIGTERM',
    endpoints: { url },
    ports: { rest: port },
  };
}
