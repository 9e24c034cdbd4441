// THE BASELINE, NOT A PATTERN. This is the style guide's relay transcribed as written
// (seed/outbox-inbox-style-guide.ru.txt, "Outbox-relay"): one transaction claims 100 rows
// FOR UPDATE SKIP LOCKED, then for each row `kafkaTemplate.send(...).get()` (one awaited send
// per row) and `row.store()` (one UPDATE per row). It exists only so `pnpm bench` can say how
// far ahead the library's relay is. It keeps no per-key order across instances, has no
// timeouts, no backoff and no commit-order fence. Never copy it.
//
// Two ways to run it: `asWritten` keeps the guide's schedule (fixedDelay = 500 ms after every
// run, which alone caps it at 100 events per 500 ms + batch time); otherwise it loops again
// at once while batches come back full, so the figure is its per-row cost, not its schedule.
import type { Kafka } from 'kafkajs';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { OutboxTables } from '@outbox-inbox/outbox';
import { toEventRecord, type EventRecord } from '@outbox-inbox/outbox/kafka-port';
import { benchClient, sendAll } from './kafka.ts';
import { sleep } from './stats.ts';

const GUIDE_BATCH = 100;
const GUIDE_FIXED_DELAY_MS = 500;

export interface NaiveRelay {
  /** Rows sent and marked so far (committed or in the open batch). */
  published(): number;
  stop(): Promise<void>;
}

interface GuideRow {
  readonly id: string;
  readonly event_id: string;
  readonly event_type: string;
  readonly aggregate_type: string;
  readonly aggregate_id: string;
  readonly created_at: Date;
  readonly topic: string;
  readonly partition_key: string;
  readonly payload: unknown;
}

/**
 * The same message as the library's relay sends (the consumers read these headers), so the
 * comparison is of the relay's work, not of what it sends.
 */
function guideMessage(row: GuideRow): EventRecord {
  return toEventRecord({ ...row, payload: JSON.stringify(row.payload), headers: {} });
}

/** The guide's claim: 100 unpublished rows, locked, skipping rows other instances hold. */
function claimGuideBatch(trx: Transaction<OutboxTables>): Promise<GuideRow[]> {
  return trx
    .selectFrom('outbox_event')
    .select([
      'id',
      'event_id',
      'event_type',
      'aggregate_type',
      'aggregate_id',
      'created_at',
      'topic',
      'partition_key',
      'payload',
    ])
    .where('published_at', 'is', null)
    .orderBy('id')
    .limit(GUIDE_BATCH)
    .forUpdate()
    .skipLocked()
    .execute();
}

export async function startNaiveRelay(deps: {
  readonly db: Kysely<OutboxTables>;
  readonly kafka: Kafka;
  /** The guide's `@Scheduled(fixedDelay = 500)`: pause after every run, full or not. */
  readonly asWritten?: boolean;
}): Promise<NaiveRelay> {
  // The relay's own producer settings: the comparison measures the relay's work, not transport.
  const producer = benchClient(deps.kafka).createProducer({ allowAutoTopicCreation: true });
  await producer.connect();
  let running = true;
  let published = 0;

  const runOnce = async (): Promise<number> =>
    deps.db.transaction().execute(async (trx) => {
      const batch = await claimGuideBatch(trx);
      for (const row of batch) {
        if (!running) break;
        await sendAll(producer, [guideMessage(row)]);
        await trx
          .updateTable('outbox_event')
          .set({ published_at: sql<Date>`now()` })
          .where('id', '=', row.id)
          .execute();
        published++;
      }
      return batch.length;
    });

  const loop = (async () => {
    while (running) {
      const claimed = await runOnce();
      if ((deps.asWritten === true || claimed < GUIDE_BATCH) && running) {
        await sleep(GUIDE_FIXED_DELAY_MS);
      }
    }
  })();

  return {
    published: () => published,
    async stop() {
      running = false;
      await loop;
      await producer.disconnect();
    },
  };
}
