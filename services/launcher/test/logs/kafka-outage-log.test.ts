import { readFileSync } from 'node:fs';
import { findFreePort, pollUntil, Stack } from '@outbox-inbox/infra';
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import { orderService } from '@outbox-inbox/order-service';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { migrateService } from '../../src/system/migrate-service.ts';
import { roleComponent } from '../../src/system/role-component.ts';

const stack = Stack.open(inject('stackName'));
// Names of their own: other files of this run add the usual ones to the same stack.
const api = 'outage-order-api';
const relay = 'outage-order-relay';
let apiUrl = '';

beforeAll(async () => {
  const databaseUrl = await stack.createDatabase('kafka_outage_log_test');
  await migrateService(orderService, databaseUrl, stack.kafkaBrokers);
  for (const [name, role] of [
    [api, 'api'],
    [relay, 'relay'],
  ] as const) {
    const port = await findFreePort();
    if (role === 'api') apiUrl = `http://127.0.0.1:${port}`;
    await stack.addProcess(
      roleComponent(
        { name, service: orderService, role },
        { port, databaseUrl, kafkaBrokers: stack.kafkaBrokers },
      ),
    );
  }
});

afterAll(async () => {
  if (!stack.isRunning('kafka')) await stack.start('kafka');
  for (const name of [relay, api]) await stack.stop(name);
});

interface Entry {
  readonly level: number;
  readonly msg: string;
  readonly component?: string;
  readonly failedAttempts?: number;
}

/** The relay's log file: JSON entries, and whatever else reached its stdout or stderr. */
function relayLog(): { entries: Entry[]; other: string[] } {
  const lines = readFileSync(stack.logFile(relay) ?? '', 'utf8')
    .split('\n')
    .filter(Boolean);
  const json = lines.filter((line) => line.startsWith('{'));
  return {
    entries: json.map((line) => JSON.parse(line) as Entry),
    other: lines.filter((line) => !line.startsWith('{')),
  };
}

async function createOrder(): Promise<void> {
  const response = await fetch(`${apiUrl}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ customerId: 'c-outage', amount: 100, currency: 'EUR' }),
  });
  expect(response.status).toBe(201);
}

it('a Kafka outage is one warning and one recovery line in the relay log, and no Node warning', async () => {
  await stack.kill('kafka');
  // The relay has something to publish: it retries, and kafkajs with it.
  await createOrder();
  const unreachable = (entry: Entry) => entry.msg.startsWith('Kafka broker unreachable');
  await pollUntil(() => relayLog().entries.some(unreachable), {
    timeoutMs: 60_000,
    description: 'the relay to find Kafka gone',
  });
  await stack.start('kafka');
  const recovered = (entry: Entry) => entry.msg === 'Kafka broker reachable again';
  await pollUntil(() => relayLog().entries.some(recovered), {
    timeoutMs: 90_000,
    intervalMs: 250,
    description: 'the relay to reach Kafka again',
  });

  const { entries, other } = relayLog();
  expect(other).toEqual([]);
  expect(entries.filter(unreachable)).toHaveLength(1);
  expect(entries.filter(recovered)).toEqual([
    expect.objectContaining({ level: 30, failedAttempts: expect.any(Number) }),
  ]);
  // Every other word of kafkajs about the outage went to debug, below the role's level.
  const kafkajsWarnings = entries.filter(
    (entry) => entry.component === 'kafkajs' && entry.level >= 40 && !unreachable(entry),
  );
  expect(kafkajsWarnings.map((entry) => entry.msg)).not.toContainEqual(
    expect.stringMatching(/ECONNREFUSED|Connection error|EoS/),
  );
});
