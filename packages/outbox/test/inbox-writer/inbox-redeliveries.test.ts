import { randomUUID } from 'node:crypto';
import type { KafkaMessage } from 'kafkajs';
import { expect, it } from 'vitest';
import type { ReceivedEvent } from '../../src/receive/received-event.ts';
import { storeInboxBatch, type AcceptedMessage } from '../../src/inbox-writer/store-inbox-batch.ts';
import { count, useTestDb } from '../support/harness.ts';

const testDb = useTestDb('inbox_redeliveries');

let offset = 0;
/** One parsed message of partition 0, as the writer hands it to storeInboxBatch. */
function accepted(eventId: string, payload: unknown = {}): AcceptedMessage {
  const event: ReceivedEvent = {
    eventId,
    eventType: 'OrderCreated',
    aggregateType: 'order',
    aggregateId: 'order-1',
    partitionKey: 'order-1',
    payload,
    occurredAt: new Date(),
    topic: 'orders',
    partition: 0,
    offset: String(offset++),
    headers: { event_id: eventId },
  };
  const message: KafkaMessage = {
    key: Buffer.from(event.partitionKey),
    value: Buffer.from(JSON.stringify(payload)),
    headers: { event_id: eventId },
    timestamp: String(Date.now()),
    attributes: 0,
    offset: event.offset,
  };
  return { event, message, payloadJson: JSON.stringify(payload) };
}

const store = (items: AcceptedMessage[]) =>
  storeInboxBatch(testDb.db, 'payments', {
    topic: 'orders',
    partition: 0,
    accepted: items,
    parked: [],
  });

async function redeliveries(): Promise<Record<string, number>> {
  const rows = await testDb.db
    .selectFrom('inbox_event')
    .select(['event_id', 'redeliveries'])
    .execute();
  return Object.fromEntries(rows.map((row) => [row.event_id, row.redeliveries]));
}

it('counts each repeat in its stored row, a first delivery not at all', async () => {
  const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
  const first = await store([accepted(a), accepted(b)]);
  expect(first.inserted).toBe(2);
  expect(await redeliveries()).toEqual({ [a]: 0, [b]: 0 });

  // `a` again twice (once stored before, once more in this very batch), `c` new, its id in
  // upper case as another producer might write it.
  const second = await store([accepted(a), accepted(c.toUpperCase()), accepted(a)]);
  expect(second.inserted).toBe(1);
  expect(await redeliveries()).toEqual({ [a]: 2, [b]: 0, [c]: 0 });

  // A repeat within one batch of a new event: the first copy is stored, the second counted.
  const d = randomUUID();
  await store([accepted(d), accepted(d)]);
  expect((await redeliveries())[d]).toBe(1);
});

it('counts the repeats of a batch whose refused event is parked, not the refused one', async () => {
  const [stored, fresh, refused] = [randomUUID(), randomUUID(), randomUUID()];
  await store([accepted(stored)]);
  // jsonb refuses a NUL: the batch is stored again half by half under savepoints.
  const result = await store([
    accepted(stored),
    accepted(refused, { note: '\u0000' }),
    accepted(fresh),
  ]);
  expect(result.refused).toHaveLength(1);
  expect(result.insertedIds).toEqual([fresh]);
  const counts = await redeliveries();
  expect(counts[stored]).toBe(1);
  expect(counts[fresh]).toBe(0);
  expect(counts[refused]).toBeUndefined();
  expect(await count(testDb.db, 'parked_message')).toBe(1);
});
