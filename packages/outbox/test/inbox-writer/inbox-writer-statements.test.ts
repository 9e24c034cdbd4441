import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { startInboxWriter, type OutboxTables } from '../../src/index.ts';
import {
  count,
  createKafka,
  createTopic,
  eventMessage,
  kafkaClient,
  produce,
  recordingLogger,
  useTestDb,
} from '../support/harness.ts';
import { countMatching, loggedDb } from '../support/statement-log.ts';

const testDb = useTestDb('inbox_writer_statements');

it('stores a batch with nothing to park as one INSERT in autocommit, and one with rejects in a transaction', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'inbox_statements', 1);
  const logged = loggedDb<OutboxTables>(testDb.url);
  const writer = await startInboxWriter({
    db: logged.db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    options: { groupId: `statements-${topic}`, topics: [topic] },
  });
  try {
    await produce(
      kafka,
      topic,
      Array.from({ length: 10 }, (_, i) => eventMessage(`order-${i % 3}`, 'OrderCreated', { i })),
    );
    await pollUntil(async () => (await count(testDb.db, 'inbox_event')) === 10, {
      timeoutMs: 30_000,
      description: 'ten events stored',
    });
    const clean = [...logged.statements];
    expect(countMatching(clean, /^with inserted as \(\s*insert into inbox_event/)).toBeGreaterThan(
      0,
    );
    expect(countMatching(clean, /^(begin|commit)/)).toBe(0);
    // The INSERTs and the NOTIFYs that wake the processors after them: nothing else.
    expect(
      clean.filter(
        (s) =>
          !/^(with inserted as \(\s*insert into inbox_event|select (set_config\('synchronous_commit', 'off', true\), )?pg_notify)/.test(
            s,
          ),
      ),
    ).toEqual([]);

    logged.statements.length = 0;
    await produce(kafka, topic, [
      { key: 'order-0', value: 'not json {', headers: { event_type: 'OrderCreated' } },
    ]);
    await pollUntil(async () => (await count(testDb.db, 'parked_message')) === 1, {
      timeoutMs: 30_000,
      description: 'the malformed message parked',
    });
    // The parked row and the offset commit that follows it: one transaction.
    expect(countMatching(logged.statements, /^begin/)).toBe(1);
    expect(countMatching(logged.statements, /^commit/)).toBe(1);
  } finally {
    await writer.stop();
    await logged.destroy();
  }
});
