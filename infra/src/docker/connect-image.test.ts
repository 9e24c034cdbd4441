import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  connectHeapMb,
  connectProjectDir,
  connectWorkerProperties,
  connectWorkerSettings,
  type ConnectWorkerPlace,
} from '../components/connect.ts';
import { serverJvmOptions } from '../components/jvm.ts';
import { connectImage, connectWorkerEnv } from './connect-image.ts';

// No Docker engine runs where this suite runs: these tests run the image's entrypoint with a
// stand-in `java`, and read its Dockerfile.

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The properties a worker reads from a file: the last value of a key wins, as in Java. */
function parseProperties(text: string): Record<string, string> {
  const entries = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const at = line.indexOf('=');
      return [line.slice(0, at), line.slice(at + 1)] as const;
    });
  return Object.fromEntries(entries);
}

const home = connectProjectDir();
const entrypoint = path.join(home, 'docker-entrypoint.sh');

/**
 * Runs docker-entrypoint.sh as the image does, from infra/connect itself, with a `java` that
 * writes down its arguments instead of starting.
 */
function runEntrypoint(env: Record<string, string>): {
  status: number | null;
  stderr: string;
  properties: string;
  javaArgs: string[];
  tmp: string;
} {
  const tmp = tempDir('connect-entrypoint-');
  const bin = path.join(tmp, 'bin');
  mkdirSync(bin);
  writeFileSync(
    path.join(bin, 'java'),
    '#!/bin/sh\nfor arg in "$@"; do printf \'%s\\n\' "$arg"; done > "$TMPDIR/java-args"\n',
  );
  chmodSync(path.join(bin, 'java'), 0o755);
  const result = spawnSync('sh', [entrypoint], {
    encoding: 'utf8',
    env: { PATH: `${bin}:/usr/bin:/bin`, TMPDIR: tmp, OUTBOX_CONNECT_HOME: home, ...env },
  });
  const read = (file: string): string => {
    try {
      return readFileSync(path.join(tmp, file), 'utf8');
    } catch {
      return '';
    }
  };
  return {
    status: result.status,
    stderr: result.stderr,
    properties: read('connect-distributed.properties'),
    javaArgs: read('java-args')
      .split('\n')
      .filter((arg) => arg !== ''),
    tmp,
  };
}

describe('the Kafka Connect image', () => {
  const place: ConnectWorkerPlace = {
    brokers: ['kafka-1:9094', 'kafka-2:9094', 'kafka-3:9094'],
    port: 8083,
    listenHost: '0.0.0.0',
    advertisedHost: 'connect',
  };

  it('starts the worker with the properties the local provider writes for the same place', () => {
    const jvmOptions = serverJvmOptions(connectHeapMb);
    const run = runEntrypoint({
      ...connectWorkerEnv(connectWorkerSettings(place)),
      JVM_OPTS: jvmOptions.join(' '),
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(parseProperties(run.properties)).toEqual(
      parseProperties(connectWorkerProperties(place)),
    );
    expect(parseProperties(run.properties)).toMatchObject({
      'group.id': 'outbox-connect',
      'bootstrap.servers': 'kafka-1:9094,kafka-2:9094,kafka-3:9094',
      'config.storage.replication.factor': '3',
      'offset.flush.interval.ms': '1000',
      'scheduled.rebalance.max.delay.ms': '0',
    });
    expect(run.javaArgs).toEqual([
      ...jvmOptions,
      '-cp',
      `${home}/libs/*`,
      `-Dlog4j.configuration=file:${home}/log4j.properties`,
      'org.apache.kafka.connect.cli.ConnectDistributed',
      path.join(run.tmp, 'connect-distributed.properties'),
    ]);
  });

  it('turns any CONNECT_* variable into a property, which may override a shared one', () => {
    const run = runEntrypoint({
      CONNECT_BOOTSTRAP_SERVERS: 'kafka:29092',
      CONNECT_OFFSET_FLUSH_INTERVAL_MS: '5000',
      JVM_OPTS: '-Xmx64m',
    });
    expect(run.status).toBe(0);
    expect(parseProperties(run.properties)['offset.flush.interval.ms']).toBe('5000');
  });

  it('refuses to start without Kafka, naming the variable', () => {
    const run = runEntrypoint({ JVM_OPTS: '-Xmx64m' });
    expect(run.status).toBe(64);
    expect(run.stderr).toContain('CONNECT_BOOTSTRAP_SERVERS is not set');
    expect(run.javaArgs).toEqual([]);
  });

  it('names every worker setting by a variable the entrypoint turns back into it', () => {
    const settings = connectWorkerSettings(place);
    const env = connectWorkerEnv(settings);
    expect(env['CONNECT_REST_ADVERTISED_HOST_NAME']).toBe('connect');
    expect(Object.keys(env)).toHaveLength(Object.keys(settings).length);
    expect(() => connectWorkerEnv({ 'odd_name.ms': '1' })).toThrow(/odd_name/);
  });

  it('is built by the Maven project the local provider runs, and runs on Java 17 with its JVM options', () => {
    const dockerfile = readFileSync(path.join(home, 'Dockerfile'), 'utf8').replaceAll(/\\\n/g, ' ');
    const lines = dockerfile
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    const from = lines.filter((line) => line.startsWith('FROM '));
    expect(from).toEqual([
      expect.stringMatching(/^FROM maven:\S*temurin-17 AS build$/),
      expect.stringMatching(/^FROM eclipse-temurin:17-jre/),
    ]);
    expect(lines).toContain('COPY pom.xml ./');
    expect(lines).toContain(
      'RUN mvn -q -B package dependency:copy-dependencies -DoutputDirectory=target/libs -DincludeScope=runtime',
    );
    expect(lines).toContain(`ENV JVM_OPTS="${serverJvmOptions(connectHeapMb).join(' ')}"`);
    expect(lines).toContain('COPY worker.properties log4j.properties docker-entrypoint.sh ./');
    expect(lines.at(-1)).toBe('ENTRYPOINT ["sh", "/opt/outbox-connect/docker-entrypoint.sh"]');
  });
});

describe('connectImage', () => {
  it('tags the image with what it is built from, Maven output left out', () => {
    const dir = tempDir('connect-image-');
    cpSync(home, dir, {
      recursive: true,
      filter: (source) => !source.startsWith(path.join(home, 'target')),
    });
    const first = connectImage(dir);
    expect(first.image).toMatch(/^outbox-inbox\/connect:[0-9a-f]{12}$/);
    expect(first.build).toEqual({ context: dir, dockerfile: 'Dockerfile' });

    mkdirSync(path.join(dir, 'target'), { recursive: true });
    writeFileSync(path.join(dir, 'target', 'leftover.jar'), 'not an input');
    expect(connectImage(dir).image).toBe(first.image);

    const headers = path.join(dir, 'src/main/java/dev/outboxinbox/connect/OutboxHeaders.java');
    writeFileSync(headers, `${readFileSync(headers, 'utf8')}\n// changed\n`);
    expect(connectImage(dir).image).not.toBe(first.image);
  });
});
