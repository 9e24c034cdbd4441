import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../../../..');
const eslint = new ESLint({ cwd: repoRoot });

/** Lints `code` as if it lived at `asPath` (relative to the repo root); returns the rule ids. */
async function ruleIdsOf(code: string, asPath: string): Promise<(string | null)[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(repoRoot, asPath) });
  return result?.messages.map((message) => message.ruleId) ?? [];
}

/** Lints a fixture as if it lived at `asPath` (relative to the repo root); returns the rule ids. */
function ruleIdsAt(fixture: string, asPath: string): Promise<(string | null)[]> {
  return ruleIdsOf(readFileSync(path.join(here, 'fixtures', fixture), 'utf8'), asPath);
}

const handler = 'services/order-service/src/orders/create-order.ts';

/** Every Kafka client for Node a fork might move to: the guard must hold for each. */
const kafkaClients = [
  'kafkajs',
  '@platformatic/kafka',
  '@confluentinc/kafka-javascript',
  'node-rdkafka',
];

describe('lint: Kafka only from relay / infrastructure modules (R-DIST-OBX-X1, X2)', () => {
  it('fires on a write handler that imports kafkajs, creates a producer and sends in its transaction', async () => {
    const ids = await ruleIdsAt('send-in-write-handler.ts', handler);
    expect(ids).toContain('@typescript-eslint/no-restricted-imports');
    expect(ids.filter((id) => id === 'no-restricted-syntax')).toHaveLength(2); // .producer() and .send()
  });

  it('fires on a send in an after-commit callback, whichever service it is in', async () => {
    for (const at of [
      'services/order-service/src/orders/cancel-order.ts',
      'services/payment-service/src/payments/x.ts',
    ]) {
      expect(await ruleIdsAt('send-after-commit.ts', at)).toEqual(['no-restricted-syntax']);
    }
  });

  it.each(kafkaClients.map((name) => [name]))(
    'fires on a handler that imports %s, or a module inside it; a type import is fine',
    async (name) => {
      const restricted = '@typescript-eslint/no-restricted-imports';
      expect(
        await ruleIdsOf(`import * as kafka from '${name}';\nexport { kafka };\n`, handler),
      ).toEqual([restricted]);
      expect(
        await ruleIdsOf(
          `import * as inner from '${name}/lib/client';\nexport { inner };\n`,
          handler,
        ),
      ).toEqual([restricted]);
      expect(
        await ruleIdsOf(
          `import type * as kafka from '${name}';\nexport type { kafka };\n`,
          handler,
        ),
      ).toEqual([]);
    },
  );

  it("fires on the other clients' ways to make a producer and send", async () => {
    const code = [
      'declare const Producer: new (options: object) => { send(m: object): Promise<void> };',
      'declare const Kafka: { Producer: new (options: object) => { produce(...a: unknown[]): void } };',
      'const producer = new Producer({});',
      'const rdkafkaProducer = new Kafka.Producer({});',
      'export const sent = producer.send({ messages: [] });',
      "rdkafkaProducer.produce('order.events', null, Buffer.from('{}'));",
      '',
    ].join('\n');
    expect(await ruleIdsOf(code, handler)).toEqual([
      'no-restricted-syntax', // new Producer
      'no-restricted-syntax', // new Kafka.Producer
      'no-restricted-syntax', // producer.send
      'no-restricted-syntax', // rdkafkaProducer.produce
    ]);
  });

  it("fires on a producer made through the library's port, and on its send", async () => {
    const code = [
      "import type { KafkaClient } from '@outbox-inbox/outbox';",
      'declare const kafka: KafkaClient;',
      'const producer = kafka.createProducer({ allowAutoTopicCreation: false });',
      'const options = { timeoutMs: 1000, keepAlive: async () => undefined };',
      "export const sent = producer.send([{ topic: 't', key: 'k', value: '{}', headers: {} }], options);",
      '',
    ].join('\n');
    expect(await ruleIdsOf(code, handler)).toEqual([
      'no-restricted-syntax', // kafka.createProducer
      'no-restricted-syntax', // producer.send
    ]);
    const inRelay = await ruleIdsOf(code, 'services/order-service/src/relay/port-producer.ts');
    expect(inRelay).toEqual([]);
  });

  it('allows the same code in relay and infrastructure modules', async () => {
    expect(
      await ruleIdsAt('send-in-write-handler.ts', 'services/order-service/src/relay/naive.ts'),
    ).toEqual([]);
    expect(
      await ruleIdsAt('send-after-commit.ts', 'services/payment-service/src/infrastructure/x.ts'),
    ).toEqual([]);
  });
});
