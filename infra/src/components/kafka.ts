import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { InfraError } from '../errors.ts';
import { findRepoRoot, type ComponentRecord } from '../state-file.ts';

function findJava(env: NodeJS.ProcessEnv): string {
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
  const kafkaDir = path.join(findRepoRoot(), 'infra', 'kafka');
  const pom = path.join(kafkaDir, 'pom.xml');
  const libs = path.join(kafkaDir, 'target', 'libs');
  const marker = path.join(libs, '.resolved');
  if (!existsSync(marker) || statSync(marker).mtimeMs < statSync(pom).mtimeMs) {
    const mvn = spawnSync('mvn', ['-v'], { encoding: 'utf8' });
    if (mvn.error || mvn.status !== 0) {
      throw new InfraError(
        'MAVEN_MISSING',
        'Maven (`mvn`) not found: it resolves the Kafka broker jars',
        {
          hint: 'install it (Debian: `apt-get install maven`), or set KAFKA_HOME to an unpacked Kafka 3.9',
        },
      );
    }
    const result = spawnSync(
      'mvn',
      [
        '-q',
        '-B',
        '-f',
        pom,
        'dependency:copy-dependencies',
        `-DoutputDirectory=${libs}`,
        '-DincludeScope=runtime',
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    if (result.status !== 0) {
      const logFile = path.join(kafkaDir, 'target', 'maven.log');
      mkdirSync(path.dirname(logFile), { recursive: true });
      writeFileSync(logFile, `${result.stdout}\n${result.stderr}`);
      throw new InfraError(
        'MAVEN_FAILED',
        'Maven could not resolve the Kafka jars from Maven Central',
        {
          hint: 'check that Maven Central is reachable (`mvn -f infra/kafka/pom.xml dependency:resolve`)',
          logFile,
        },
      );
    }
    writeFileSync(marker, `${new Date().toISOString()}\n`);
  }
  if (!readdirSync(libs).some((file) => file.startsWith('kafka_2.13-'))) {
    throw new InfraError('MAVEN_FAILED', `no kafka_2.13 jar in ${libs}`, {
      hint: `delete ${libs} and try again`,
    });
  }
  return `${libs}/*`;
}

function serverProperties(options: {
  port: number;
  controllerPort: number;
  dataDir: string;
}): string {
  const { port, controllerPort, dataDir } = options;
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    `log.dirs=${dataDir}`,
    'num.partitions=3',
    'default.replication.factor=1',
    'offsets.topic.replication.factor=1',
    // Fewer internal partitions: the first consumer group and the first idempotent producer
    // wait for these topics to be created.
    'offsets.topic.num.partitions=6',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'transaction.state.log.num.partitions=6',
    'group.initial.rebalance.delay.ms=0',
    // After a SIGKILL the restarted broker is refused (DUPLICATE_BROKER_REGISTRATION) until the
    // dead incarnation's session expires: 9 s by default, 2 s here.
    'broker.session.timeout.ms=2000',
    'broker.heartbeat.interval.ms=500',
    'auto.create.topics.enable=true',
    '',
  ].join('\n');
}

const log4jProperties = [
  'log4j.rootLogger=INFO, stdout',
  'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
  'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
  'log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n',
  'log4j.logger.org.apache.kafka=WARN',
  'log4j.logger.kafka=WARN',
  'log4j.logger.kafka.server.KafkaRaftServer=INFO',
  'log4j.logger.state.change.logger=WARN',
  '',
].join('\n');

/** Apache Kafka 3.9 in KRaft combined mode (broker + controller in one JVM). */
export function defineKafka(options: {
  dir: string;
  port: number;
  controllerPort: number;
  heapMb?: number;
  env?: NodeJS.ProcessEnv;
}): ComponentRecord {
  const { dir, port, controllerPort } = options;
  const env = options.env ?? process.env;
  const java = findJava(env);
  const classpath = resolveKafkaClasspath(env);
  const dataDir = path.join(dir, 'data');
  mkdirSync(dir, { recursive: true });
  const configFile = path.join(dir, 'server.properties');
  const log4jFile = path.join(dir, 'log4j.properties');
  writeFileSync(configFile, serverProperties({ port, controllerPort, dataDir }));
  writeFileSync(log4jFile, log4jProperties);
  const clusterId = Buffer.from(randomUUID().replaceAll('-', ''), 'hex').toString('base64url');
  const heap = `${options.heapMb ?? 512}m`;
  const jvmCommon = ['-cp', classpath, `-Dlog4j.configuration=file:${log4jFile}`];
  const brokers = `127.0.0.1:${port}`;
  return {
    name: 'kafka',
    kind: 'kafka',
    dataDir,
    prepare: {
      command: java,
      args: [
        ...jvmCommon,
        'kafka.tools.StorageTool',
        'format',
        '-t',
        clusterId,
        '-c',
        configFile,
        '--ignore-formatted',
      ],
    },
    launch: {
      command: java,
      args: [
        `-Xms${heap}`,
        `-Xmx${heap}`,
        '-XX:+UseG1GC',
        '-XX:+ExitOnOutOfMemoryError',
        '-Djava.awt.headless=true',
        ...jvmCommon,
        'kafka.Kafka',
        configFile,
      ],
      cwd: dir,
      env: {},
      logFile: path.join(dir, 'kafka.log'),
    },
    readiness: { type: 'kafka', brokers: [brokers] },
    readyTimeoutMs: 60_000,
    stopSignal: 'SIGTERM',
    endpoints: { brokers },
    ports: { kafka: port, controller: controllerPort },
  };
}
