import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { InfraError } from '../errors.ts';
import type { KafkaRecord } from '../component-record.ts';
import { findRepoRoot } from '../state-file.ts';
import { consoleLog4j, serverJvmOptions } from './jvm.ts';
import { classArchiveOptions, existingClassArchive } from './jvm-class-archive.ts';
import { resolveMavenJars } from './maven.ts';

/** The `java` to run Kafka (and Kafka's own tools) with: JAVA_HOME's, else the one on PATH. */
export function findJava(env: NodeJS.ProcessEnv = process.env): string {
  const java = env['JAVA_HOME'] ? path.join(env['JAVA_HOME'], 'bin', 'java') : 'java';
  const probe = spawnSync(java, ['-version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new InfraError(
      'JAVA_MISSING',
      `Java not found (tried \`${java}\`): Kafka needs Java 17 or newer`,
      {
        hint: 'install it (Debian: `apt-get install openjdk-17-jre-headless`) or set JAVA_HOME',
      },
    );
  }
  return java;
}

/**
 * The broker's classpath: KAFKA_HOME/libs when set, else jars resolved from Maven Central by
 * infra/kafka/pom.xml into infra/kafka/target/libs (resolved once; ~/.m2 caches between clones).
 */
export function resolveKafkaClasspath(env: NodeJS.ProcessEnv = process.env): string {
  if (env['KAFKA_HOME']) {
    const libs = path.join(env['KAFKA_HOME'], 'libs');
    if (!existsSync(libs)) {
      throw new InfraError('START_FAILED', `KAFKA_HOME=${env['KAFKA_HOME']} has no libs/ folder`, {
        hint: 'point KAFKA_HOME at an unpacked Apache Kafka distribution, or unset it to use Maven',
      });
    }
    return `${libs}/*`;
  }
  const libs = resolveMavenJars({
    projectDir: path.join(findRepoRoot(), 'infra', 'kafka'),
    what: 'the Kafka broker',
    requiredJar: 'kafka_2.13-',
  });
  return `${libs}/*`;
}

/** One voter of a KRaft quorum: its node id and controller port. */
export interface KafkaVoter {
  readonly nodeId: number;
  readonly controllerPort: number;
}

/**
 * Replicas of Kafka's internal topics (consumer offsets): as many as the cluster has, up to
 * three, with the same in-sync minimum as the contracts' topics (two, or one on one broker).
 */
function internalReplication(brokers: number): { factor: number; minIsr: number } {
  const factor = Math.min(3, brokers);
  return { factor, minIsr: Math.min(2, factor) };
}

/**
 * How long a node may miss heartbeats before the controller fences it. A lone broker: after a
 * SIGKILL the restarted broker is refused (DUPLICATE_BROKER_REGISTRATION) until the dead
 * incarnation's session expires, 9 s by default, so 2 s. A cluster: the same timeout fences a
 * live node that is only slow, and on a starved machine 2 s moved leaders back and forth
 * between live nodes; a longer one still fails over a dead leader within seconds.
 */
export function brokerSession(brokers: number): { timeoutMs: number; heartbeatMs: number } {
  return brokers === 1
    ? { timeoutMs: 2000, heartbeatMs: 500 }
    : { timeoutMs: 6000, heartbeatMs: 1000 };
}

function serverProperties(options: {
  nodeId: number;
  port: number;
  controllerPort: number;
  voters: readonly KafkaVoter[];
  dataDir: string;
}): string {
  const { nodeId, port, controllerPort, dataDir } = options;
  const voters = options.voters
    .map((voter) => `${voter.nodeId}@127.0.0.1:${voter.controllerPort}`)
    .join(',');
  const internal = internalReplication(options.voters.length);
  const session = brokerSession(options.voters.length);
  return [
    'process.roles=broker,controller',
    `node.id=${nodeId}`,
    // A static voter set: every node of the cluster is a controller, and all know each other.
    `controller.quorum.voters=${voters}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    `log.dirs=${dataDir}`,
    'num.partitions=3',
    `default.replication.factor=${internal.factor}`,
    `offsets.topic.replication.factor=${internal.factor}`,
    // Fewer internal partitions: the first consumer group and the first idempotent producer
    // wait for these topics to be created.
    'offsets.topic.num.partitions=6',
    `transaction.state.log.replication.factor=${internal.factor}`,
    `transaction.state.log.min.isr=${internal.minIsr}`,
    'transaction.state.log.num.partitions=6',
    'group.initial.rebalance.delay.ms=0',
    `broker.session.timeout.ms=${session.timeoutMs}`,
    `broker.heartbeat.interval.ms=${session.heartbeatMs}`,
    // Topics are declared in packages/contracts and provisioned by the services' migrate: a
    // typo in a topic name is an error, not a new topic with default settings.
    'auto.create.topics.enable=false',
    '',
  ].join('\n');
}

const log4jProperties = consoleLog4j({
  'org.apache.kafka': 'WARN',
  kafka: 'WARN',
  'kafka.server.KafkaRaftServer': 'INFO',
  'state.change.logger': 'WARN',
});

/** A random KRaft cluster id: base64url of a UUID's 16 bytes, as `kafka-storage random-uuid` makes. */
export function newClusterId(): string {
  return Buffer.from(randomUUID().replaceAll('-', ''), 'hex').toString('base64url');
}

/** Options of `defineKafka`. */
export interface KafkaOptions {
  dir: string;
  port: number;
  controllerPort: number;
  heapMb?: number;
  /** KRaft cluster id (base64url of 16 bytes); a fresh random one when absent. */
  clusterId?: string;
  /** On a cluster: the component's name (`kafka-2`), its node id and every voter, itself included. */
  node?: { name: string; nodeId: number; voters: readonly KafkaVoter[] };
  /**
   * Start fast rather than run at peak speed (tests' and dev stacks, not a durable one): the
   * first-tier compiler only, and classes mapped from an archive (jvm-class-archive.ts). A
   * rolling restart of a three-node cluster under load took 111 s with the JVM's defaults and
   * 58 s so, the JVMs' CPU about half.
   */
  quickStart?: boolean;
  env?: NodeJS.ProcessEnv;
}

/** Writes the node's server.properties and log4j.properties into its folder. */
function writeConfigFiles(
  dir: string,
  properties: string,
): { configFile: string; log4jFile: string } {
  mkdirSync(dir, { recursive: true });
  const configFile = path.join(dir, 'server.properties');
  const log4jFile = path.join(dir, 'log4j.properties');
  writeFileSync(configFile, properties);
  writeFileSync(log4jFile, log4jProperties);
  return { configFile, log4jFile };
}

/**
 * The quick-start JVM options: the storage tool only maps an archive that exists, while the
 * server's run may record one for the next start.
 */
function quickStartOptions(
  quick: boolean,
  java: string,
  classpath: string,
): { tool: string[]; server: string[] } {
  if (!quick) return { tool: [], server: [] };
  return {
    tool: ['-XX:TieredStopAtLevel=1', ...existingClassArchive('kafka', java, classpath)],
    server: ['-XX:TieredStopAtLevel=1', ...classArchiveOptions('kafka', java, classpath)],
  };
}

/** The arguments of `java` that format the data folder for the cluster, once. */
function storageFormatArgs(
  jvmOptions: readonly string[],
  clusterId: string,
  configFile: string,
): string[] {
  return [
    ...jvmOptions,
    'kafka.tools.StorageTool',
    'format',
    // One argument each: a base64url id starts with `-` one time in 64, and the tool's
    // parser takes a separate `-t <id>` for two options.
    `--cluster-id=${clusterId}`,
    `--config=${configFile}`,
    '--ignore-formatted',
  ];
}

/** Apache Kafka 3.9 in KRaft combined mode (broker + controller in one JVM). */
export function defineKafka(options: KafkaOptions): KafkaRecord {
  const { dir, port, controllerPort } = options;
  const env = options.env ?? process.env;
  const java = findJava(env);
  const classpath = resolveKafkaClasspath(env);
  const dataDir = path.join(dir, 'data');
  const nodeId = options.node?.nodeId ?? 1;
  const voters = options.node?.voters ?? [{ nodeId, controllerPort }];
  const { configFile, log4jFile } = writeConfigFiles(
    dir,
    serverProperties({ nodeId, port, controllerPort, voters, dataDir }),
  );
  const clusterId = options.clusterId ?? newClusterId();
  const heapMb = options.heapMb ?? 512;
  const jvmCommon = ['-cp', classpath, `-Dlog4j.configuration=file:${log4jFile}`];
  const quick = quickStartOptions(options.quickStart ?? false, java, classpath);
  const brokers = `127.0.0.1:${port}`;
  return {
    name: options.node?.name ?? 'kafka',
    kind: 'kafka',
    dataDir,
    prepare: {
      command: java,
      args: storageFormatArgs([...quick.tool, ...jvmCommon], clusterId, configFile),
    },
    launch: {
      command: java,
      args: [...serverJvmOptions(heapMb), ...quick.server, ...jvmCommon, 'kafka.Kafka', configFile],
      cwd: dir,
      env: {},
      logFile: path.join(dir, 'kafka.log'),
    },
    // A cluster node is ready when the cluster counts it among its live brokers; alone, it
    // cannot be: the quorum needs a majority of the voters.
    readiness: options.node
      ? { type: 'kafka', brokers: [brokers], nodeId }
      : { type: 'kafka', brokers: [brokers] },
    // A restarted cluster node first catches up with the metadata log and its replicas.
    readyTimeoutMs: options.node ? 120_000 : 60_000,
    stopSignal: 'SIGTERM',
    endpoints: { brokers, nodeId: String(nodeId) },
    ports: { kafka: port, controller: controllerPort },
  };
}
