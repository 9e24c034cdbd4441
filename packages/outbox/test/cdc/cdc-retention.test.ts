import { randomUUID } from 'node:crypto';
import { pollUntil } from '@outbox-inbox/infra';
import type { Kafka } from 'kafkajs';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConnectApi, registerCdcRelay, removeCdcRelay, type CdcRelayDeps } from '../../src/cdc.ts';
import { enqueueMany, silentLogger, type OutboxTables } from '../../src/index.ts';
import { runRetention } from '../../src/ops.ts';
import {
  kafkaClient,
  collectTopic,
  count,
  createKafka,
  createTopic,
  stack,
  useTestDb,
} from '../support/harness.ts';
import { pauseConnector } from '../support/connect.ts';

const testDb = useTestDb('cdc_retention');
let kafka: Kafka;
let topic: string;
let cdc: CdcRelayDeps<OutboxTables>;

beforeAll(async () => {
  await stack().addServer('connect');
  kafka = createKafka('cdc-retention');
  topic = await createTopic(kafka, 'cdc-retention', 3);
  cdc = {
    db: testDb.db,
    kafka: kafkaClient(kafka),
    connectUrl: stack().connectUrl,
    connector: { name: `retention-${randomUUID()}`, databaseUrl: testDb.url },
    logger: silentLogger,
  };
}, 240_000);

afterAll(async () => {
  if (cdc) await removeCdcRelay(cdc);
}, 60_000);

it('in CDC mode retention deletes outbox rows by age, and a row deleted before the connector sent it is still published', async () => {
  await registerCdcRelay(cdc);
  const api = new ConnectApi(cdc.connectUrl);
  const collected = await collectTopic(kafka, topic);
  try {
    await pauseConnector(api, cdc.connector.name);
    const { eventIds } = await testDb.db.transaction().execute((trx) =>
      enqueueMany(
        trx,
        Array.from({ length: 6 }, (_, n) => ({
          eventType: 'Step',
          aggregateType: 'order',
          aggregateId: `k${n % 2}`,
          topic,
          partitionKey: `k${n % 2}`,
          payload: { n },
        })),
      ),
    );
    // Four of them are old (the UPDATE is not published: the publication has inserts only).
    const old = eventIds.slice(0, 4);
    await sql`UPDATE outbox_event SET created_at = now() - interval '30 days'
      WHERE event_id = ANY(${old}::uuid[])`.execute(testDb.db);

    const result = await runRetention(testDb.db, {
      olderThan: 7 * 86_400_000,
      outboxPublishedBy: 'cdc',
    });
    // Nothing went out meanwhile: the paused task holds them in the slot.
    expect(collected.messages.filter((m) => eventIds.includes(m.eventId))).toEqual([]);
    expect(result.outboxDeleted).toBe(4);
    expect(await count(testDb.db, 'outbox_event')).toBe(2);
    // The polling relay's rule would have deleted none of them: none is marked published.
    expect((await runRetention(testDb.db, { olderThan: 0 })).outboxDeleted).toBe(0);

    // Resumed, the connector reads every insert from the WAL its slot kept: all six go out.
    await api.resume(cdc.connector.name);
    await pollUntil(
      () => eventIds.every((id) => collected.messages.some((m) => m.eventId === id)),
      {
        timeoutMs: 60_000,
        description: 'all six events, the four deleted rows included',
      },
    );
  } finally {
    await collected.stop();
  }
}, 180_000);
