import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ConnectRecord } from '../component-record.ts';
import { findRepoRoot } from '../state-file.ts';
import { findJava } from './kafka.ts';
import { consoleLog4j, serverJvmOptions } from './jvm.ts';
import { resolveMavenJars } from './maven.ts';

/**
 * Kafka Connect's classpath: connect-runtime, Debezium's PostgreSQL connector and its outbox
 * event router, resolved from Maven Central by infra/connect/pom.xml, plus the project's own
 * transformation that jar builds (infra/connect/src).
 */
export function resolveConnectClasspath(): string {
  const projectDir = path.join(findRepoRoot(), 'infra', 'connect');
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

/**
 * The worker's Kafka topics (its configs, source offsets and connector status, as production
 * runs it) get as many replicas as the cluster has, up to three.
 */
function workerProperties(options: { brokers: readonly string[]; port: number }): string {
  const replicas = Math.min(3, options.brokers.length);
  return [
    `bootstrap.servers=${options.brokers.join(',')}`,
    'group.id=outbox-connect',
    `listeners=http://127.0.0.1:${options.port}`,
    'rest.advertised.host.name=127.0.0.1',
    `rest.advertised.port=${options.port}`,
    'config.storage.topic=connect-configs',
    'offset.storage.topic=connect-offsets',
    'status.storage.topic=connect-status',
    `config.storage.replication.factor=${replicas}`,
    `offset.storage.replication.factor=${replicas}`,
    `status.storage.replication.factor=${replicas}`,
    'offset.storage.partitions=5',
    'status.storage.partitions=5',
    // Keys, values and headers go out as the strings the outbox row holds: the same bytes the
    // polling relay sends.
    'key.converter=org.apache.kafka.connect.storage.StringConverter',
    'value.converter=org.apache.kafka.connect.storage.StringConverter',
    'header.converter=org.apache.kafka.connect.storage.StringConverter',
    // How far back a killed worker restarts: events sent after the last flush are sent again.
    'offset.flush.interval.ms=1000',
    // A group of one: a worker that died and started again gets its connectors back at once,
    // not after the five minutes a cluster waits for a lost worker to return.
    'scheduled.rebalance.max.delay.ms=0',
    '',
  ].join('\n');
}

const log4jProperties = consoleLog4j({
  'org.apache.kafka': 'WARN',
  'org.apache.kafka.connect.runtime.Connect': 'INFO',
  'org.apache.kafka.connect.runtime.distributed.DistributedHerder': 'INFO',
  'org.reflections': 'ERROR',
  'io.debezium': 'INFO',
});

/**
 * Kafka Connect as a distributed worker (a group of one here): its configs, offsets and status
 * live in Kafka topics, so a worker that is killed, or replaced, resumes from them.
 */
export function defineConnect(options: {
  dir: string;
  port: number;
  brokers: readonly string[];
  heapMb?: number;
  env?: NodeJS.ProcessEnv;
}): ConnectRecord {
  const { dir, port } = options;
  const java = findJava(options.env ?? process.env);
  const classpath = resolveConnectClasspath();
  mkdirSync(dir, { recursive: true });
  const configFile = path.join(dir, 'connect-distributed.properties');
  const log4jFile = path.join(dir, 'log4j.properties');
  writeFileSync(configFile, workerProperties({ brokers: options.brokers, port }));
  writeFileSync(log4jFile, log4jProperties);
  const heapMb = options.heapMb ?? 384;
  const url = `http://127.0.0.1:${port}`;
  return {
    name: 'connect',
    kind: 'connect',
    dataDir: dir,
    launch: {
      command: java,
      args: [
        ...serverJvmOptions(heapMb),
        '-cp',
        classpath,
        `-Dlog4j.configuration=file:${log4jFile}`,
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
