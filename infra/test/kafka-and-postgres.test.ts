import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Stack } from '../src/index.ts';

const stack = Stack.open(inject('stackName'));

function kafkaClient(clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers: stack.kafkaBrokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 500 },
  });
}

/** Reads every message of a topic from the beginning with a fresh consumer group. */
async function readTopic(topic: string, expected: number): Promise<string[]> {
  const consumer = kafkaClient('reader').consumer({ groupId: `reader-${topic}-${Date.now()}` });
  const values: string[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const done = new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async ({ message }) => {
        values.push(message.value?.toString() ?? '');
        if (values.length >= expected) resolve();
      },
    });
  });
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`read ${values.length} of ${expected} messages`)), 30_000),
  );
  try {
    await Promise.race([done, timeout]);
  } finally {
    await consumer.disconnect();
  }
  return values;
}

describe('Kafka', () => {
  const admin = kafkaClient('admin').admin();
  beforeAll(() => admin.connect());
  afterAll(() => admin.disconnect());

  it('creates a topic, produces and consumes', async () => {
    await admin.createTopics({
      topics: [{ topic: 'roundtrip', numPartitions: 2 }],
      waitForLeaders: true,
    });
    const producer = kafkaClient('producer').producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const messages = Array.from({ length: 50 }, (_, i) => ({ key: `k${i % 5}`, value: `m${i}` }));
    await producer.send({ topic: 'roundtrip', acks: -1, messages });
    await producer.disconnect();

    const values = await readTopic('roundtrip', messages.length);
    expect(values.sort()).toEqual(messages.map((m) => m.value).sort());
  });

  it('keeps every acknowledged message through a SIGKILL and restart; sends fail clearly while down', async () => {
    await admin.createTopics({
      topics: [{ topic: 'survivor', numPartitions: 1 }],
      waitForLeaders: true,
    });
    const producer = kafkaClient('producer').producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const acknowledged: string[] = [];
    const failures: Error[] = [];
    let next = 0;
    let killed = false;
    // Keep sending while the broker is killed underneath the producer.
    const sending = (async () => {
      while (failures.length === 0) {
        const value = `v${next++}`;
        try {
          await producer.send({ topic: 'survivor', acks: -1, messages: [{ value }] });
          acknowledged.push(value);
        } catch (error) {
          if (!killed) throw error;
          failures.push(error as Error);
        }
      }
    })();
    while (acknowledged.length < 200) await new Promise((resolve) => setImmediate(resolve));
    killed = true;
    await stack.kill('kafka');
    await sending;
    expect(stack.isRunning('kafka')).toBe(false);
    expect(failures[0]?.name).toMatch(/KafkaJS/);
    await producer.disconnect().catch(() => undefined);

    await stack.start('kafka');
    const values = await readTopic('survivor', acknowledged.length);
    expect(new Set(values)).toEqual(new Set([...values, ...acknowledged]));
    for (const value of acknowledged) expect(values).toContain(value);
  });
});

describe('PostgreSQL', () => {
  it('keeps committed rows through a SIGKILL and restart', async () => {
    const url = await stack.createDatabase('survivor');
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    pool.on('error', () => undefined);
    await pool.query('CREATE TABLE IF NOT EXISTS fact (id int PRIMARY KEY)');
    await pool.query('INSERT INTO fact SELECT generate_series(1, 1000)');
    const pid = stack.pid('postgres');

    expect(await stack.kill('postgres')).toBe(true);
    await expect(pool.query('SELECT 1')).rejects.toThrow();
    // A second kill finds nothing alive: it says so, and a test records no fault for it.
    expect(await stack.kill('postgres')).toBe(false);
    await stack.start('postgres');

    expect(stack.pid('postgres')).not.toBe(pid);
    const fresh = new pg.Client({ connectionString: url });
    await fresh.connect();
    const { rows } = await fresh.query<{ count: string }>('SELECT count(*) FROM fact');
    await fresh.end();
    await pool.end();
    expect(rows[0]?.count).toBe('1000');
  });
});
