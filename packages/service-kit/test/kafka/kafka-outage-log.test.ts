import net from 'node:net';
import { findFreePort, pollUntil, Stack } from '@outbox-inbox/infra';
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import { pino, type Logger } from 'pino';
import { afterEach, expect, inject, it } from 'vitest';
import { createKafka } from '../../src/index.ts';

interface Line {
  readonly level: number;
  readonly msg: string;
  readonly [field: string]: unknown;
}

const debug = 20;
const info = 30;
const warn = 40;

/** A service logger whose lines the test reads back, debug included. */
function capturedLogger(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const logger = pino(
    { level: 'debug' },
    { write: (line: string) => void lines.push(JSON.parse(line) as Line) },
  );
  return { logger, lines };
}

/** Forwards connections to the real broker once opened; until then its port refuses them. */
function brokerProxy(port: number, target: string): { open(): Promise<void>; close(): void } {
  const [host = '127.0.0.1', targetPort = '0'] = target.split(':');
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect({ host, port: Number(targetPort) });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  return {
    open: () => new Promise((resolve) => server.listen(port, '127.0.0.1', resolve)),
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it('logs an outage as one warning when it starts and one info line with the count when it ends', async () => {
  const [realBroker = ''] = Stack.open(inject('stackName')).kafkaBrokers;
  const port = await findFreePort();
  const proxy = brokerProxy(port, realBroker);
  cleanups.push(() => proxy.close());
  const { logger, lines } = capturedLogger();
  const kafka = await createKafka({
    clientId: 'outage-log-test',
    brokers: [`127.0.0.1:${port}`],
    logger,
  });
  const admin = kafka.createAdmin();
  cleanups.push(() => admin.disconnect());

  // Nothing listens yet: kafkajs retries, as it does while Kafka is down.
  const connecting = admin.connect();
  const retried = () => lines.filter((line) => line.level === debug);
  await pollUntil(() => retried().length >= 3, {
    timeoutMs: 20_000,
    description: 'kafkajs to fail a few connection attempts',
  });
  await proxy.open();
  await connecting;

  const broker = `127.0.0.1:${port}`;
  const loud = lines.filter((line) => line.level >= warn);
  expect(loud).toEqual([
    expect.objectContaining({ level: warn, broker, msg: expect.stringMatching(/unreachable/) }),
  ]);
  expect(String(loud[0]?.['error'])).toMatch(/ECONNREFUSED/);
  const recovered = lines.filter((line) => line.level === info);
  expect(recovered).toEqual([
    expect.objectContaining({ broker, msg: 'Kafka broker reachable again' }),
  ]);
  // The first failure opened the outage; every other one went to debug.
  expect(recovered[0]?.['failedAttempts']).toBe(retried().length + 1);
  expect(recovered[0]?.['outageMs']).toBeGreaterThan(0);
});

it('does not pass on kafkajs warning that the relay producer limits its retries', async () => {
  const brokers = Stack.open(inject('stackName')).kafkaBrokers;
  const { logger, lines } = capturedLogger();
  const kafka = await createKafka({ clientId: 'eos-warning-test', brokers, logger });
  const producer = kafka.createProducer({ allowAutoTopicCreation: false });
  await producer.connect();
  await producer.disconnect();
  expect(lines.map((line) => line.msg)).not.toContainEqual(expect.stringMatching(/EoS/));
});
