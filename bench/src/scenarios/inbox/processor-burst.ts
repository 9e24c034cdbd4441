import { sql, type Kysely } from 'kysely';
import { Registry } from 'prom-client';
import { silentLogger, startInboxProcessor, type OutboxTables } from '@outbox-inbox/outbox';
import { createOutboxMetrics } from '@outbox-inbox/outbox/ops';
import type { BenchSettings } from '../../settings.ts';
import { sleep } from '../../stats.ts';
import { INBOX_TOPIC } from './ingest.ts';

export interface BurstRun {
  readonly concurrency: number;
  readonly rate: number;
  readonly seconds: number;
}

/** The burst: inbox rows as the writer stores them, over `keys` keys, freshly analysed. */
async function writeBurst(db: Kysely<OutboxTables>, settings: BenchSettings): Promise<void> {
  await sql`TRUNCATE inbox_event`.execute(db);
  await sql`
    INSERT INTO inbox_event (event_id, consumer_group, event_type, aggregate_type, aggregate_id,
      partition_key, payload, topic, kafka_partition, kafka_offset, occurred_at)
    SELECT gen_random_uuid(), 'bench', 'OrderCreated', 'order', 'order-' || (i % ${settings.keys}),
      'order-' || (i % ${settings.keys}), jsonb_build_object('seq', i, 'note', repeat('x', 300)),
      ${INBOX_TOPIC}, i % ${settings.partitions}, i, now()
    FROM generate_series(1, ${settings.processorMessages}) AS i`.execute(db);
  await sql`VACUUM ANALYZE inbox_event`.execute(db);
}

/** The processor drains the burst with a handler that sleeps `handlerMs`, at `concurrency`. */
export async function processorRun(
  db: Kysely<OutboxTables>,
  settings: BenchSettings,
  concurrency: number,
): Promise<BurstRun> {
  await writeBurst(db, settings);
  const metrics = createOutboxMetrics(new Registry());
  const started = performance.now();
  const worker = startInboxProcessor({
    db,
    logger: silentLogger,
    metrics,
    handlers: { OrderCreated: () => sleep(settings.handlerMs) },
    options: { concurrency, pollIntervalMs: 50 },
  });
  const total = settings.processorMessages;
  while (((await metrics.inboxProcessedTotal.get()).values[0]?.value ?? 0) < total) {
    await sleep(10);
  }
  const seconds = (performance.now() - started) / 1000;
  await worker.stop();
  return { concurrency, seconds, rate: total / seconds };
}
