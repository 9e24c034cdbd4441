import type { Message } from 'kafkajs';
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import {
  createOutboxMetrics,
  migrateOutbox,
  silentLogger,
  startRelay,
  type OutboxTables,
} from '@outbox-inbox/outbox';
import { averagePayloadBytes, clearOutbox, writeBacklog } from '../backlog.ts';
import type { BenchContext } from '../context.ts';
import { benchDb } from '../database.ts';
import { baselineProducer, freshTopics } from '../kafka.ts';
import { startNaiveRelay } from '../naive-relay.ts';
import type { Section } from '../report.ts';
import { fixed, int, showSpread, sleep, spread } from '../stats.ts';

const TOPIC = 'bench.drain';
const RAW_TOPIC = 'bench.drain.raw';

/**
 * B1: one relay drains a backlog; baseline A is raw kafkajs `sendBatch` of the same messages
 * (same batch size, same producer settings); baseline B is the style guide's row-by-row relay.
 * Each round runs all three back to back, the order rotating from round to round; ratios are
 * taken within a round, then the median (min–max) over rounds is reported.
 */
export async function relayDrain(ctx: BenchContext): Promise<Section> {
  const { settings, kafka } = ctx;
  const url = await ctx.stack.createDatabase('bench_drain');
  const db = benchDb<OutboxTables>(url);
  try {
    await migrateOutbox(db);
    await freshTopics(kafka, [
      { topic: TOPIC, partitions: settings.partitions },
      { topic: RAW_TOPIC, partitions: settings.partitions },
    ]);

    // The raw producer's messages: the relay's own encoding of the same rows, built in
    // memory beforehand (reading the database is part of the relay's cost, not the raw one's).
    await writeBacklog(db, { events: settings.drainEvents, keys: settings.keys, topic: TOPIC });
    const payloadBytes = await averagePayloadBytes(db);
    const rows = await db.selectFrom('outbox_event').selectAll().orderBy('id').execute();
    const messages: Message[] = rows.map((row) => ({
      key: row.partition_key,
      value: JSON.stringify(row.payload),
      headers: {
        event_id: row.event_id,
        event_type: row.event_type,
        aggregate_type: row.aggregate_type,
        aggregate_id: row.aggregate_id,
        occurred_at: row.created_at.toISOString(),
      },
    }));

    const raw = async (): Promise<number> => {
      const producer = baselineProducer(kafka);
      await producer.connect();
      const started = performance.now();
      for (let i = 0; i < messages.length; i += settings.batchSize) {
        await producer.sendBatch({
          topicMessages: [
            { topic: RAW_TOPIC, messages: messages.slice(i, i + settings.batchSize) },
          ],
          acks: -1,
        });
      }
      const seconds = (performance.now() - started) / 1000;
      await producer.disconnect();
      return messages.length / seconds;
    };

    const relay = async (): Promise<number> => {
      await clearOutbox(db);
      await writeBacklog(db, { events: settings.drainEvents, keys: settings.keys, topic: TOPIC });
      await sql`ANALYZE outbox_event`.execute(db);
      const metrics = createOutboxMetrics(new Registry());
      const started = performance.now();
      const worker = await startRelay({
        db,
        kafka,
        logger: silentLogger,
        metrics,
        options: { batchSize: settings.batchSize, pollIntervalMs: 50 },
      });
      while (((await metrics.publishedTotal.get()).values[0]?.value ?? 0) < settings.drainEvents) {
        await sleep(10);
      }
      const seconds = (performance.now() - started) / 1000;
      await worker.stop();
      return settings.drainEvents / seconds;
    };

    const naive = async (): Promise<number> => {
      await clearOutbox(db);
      await writeBacklog(db, { events: settings.naiveEvents, keys: settings.keys, topic: TOPIC });
      await sql`ANALYZE outbox_event`.execute(db);
      const started = performance.now();
      const worker = await startNaiveRelay({ db, kafka });
      while (
        performance.now() - started < settings.naiveSeconds * 1000 &&
        worker.published() < settings.naiveEvents
      ) {
        await sleep(20);
      }
      const published = worker.published();
      const seconds = (performance.now() - started) / 1000;
      await worker.stop();
      return published / seconds;
    };

    // Warm-up: the broker's JIT and page cache, and this process's, before anything counts.
    ctx.log('B1 warm-up');
    await raw();
    const runs = { raw: [] as number[], relay: [] as number[], naive: [] as number[] };
    const kinds = ['raw', 'relay', 'naive'] as const;
    const run = { raw, relay, naive };
    for (let round = 0; round < settings.rounds; round++) {
      for (let k = 0; k < kinds.length; k++) {
        const kind = kinds[(k + round) % kinds.length] ?? 'raw';
        const rate = await run[kind]();
        runs[kind].push(rate);
        ctx.log(`B1 round ${round + 1} ${kind}: ${int(rate)} events/s`);
      }
    }
    const relayToRaw = spread(runs.relay.map((r, i) => r / (runs.raw[i] ?? Number.NaN)));
    const relayToNaive = spread(runs.relay.map((r, i) => r / (runs.naive[i] ?? Number.NaN)));
    const ratio = (v: number) => fixed(v);
    return {
      id: 'B1',
      title: 'Relay drain: one relay vs raw kafkajs producer vs the row-by-row relay',
      tables: [
        {
          headers: ['publisher', 'events/s median (min–max)', 'runs (events/s)'],
          rows: [
            [
              'raw kafkajs sendBatch (A)',
              showSpread(spread(runs.raw)),
              runs.raw.map(int).join(', '),
            ],
            ['relay, 1 instance', showSpread(spread(runs.relay)), runs.relay.map(int).join(', ')],
            [
              'naive row-by-row relay (B)',
              showSpread(spread(runs.naive)),
              runs.naive.map(int).join(', '),
            ],
          ],
        },
        {
          headers: ['ratio (per round, then median)', 'median (min–max)'],
          rows: [
            ['relay / raw', showSpread(relayToRaw, ratio)],
            ['relay / naive', showSpread(relayToNaive, ratio)],
          ],
        },
      ],
      notes: [
        `${int(settings.drainEvents)} events per relay and raw run, ~${payloadBytes}-byte JSON payloads, ${settings.keys} keys, ${settings.partitions} partitions, batch ${settings.batchSize}, acks -1, idempotent producer with 1 request in flight for all three.`,
        `The naive relay is timed for ${settings.naiveSeconds} s per round (or until its ${int(settings.naiveEvents)}-row backlog is gone); its per-row cost does not depend on the backlog size.`,
        `${settings.rounds} rounds, order rotated each round (raw→relay→naive, relay→naive→raw, …).`,
      ],
      targets: [
        {
          name: 'relay ≥ 0.6 × raw producer',
          goal: '≥ 0.60',
          measured: showSpread(relayToRaw, ratio),
          met: relayToRaw.median >= 0.6,
        },
        {
          name: 'relay ≥ 20 × row-by-row relay',
          goal: '≥ 20',
          measured: showSpread(relayToNaive, (v) => fixed(v, 1)),
          met: relayToNaive.median >= 20,
        },
      ],
    };
  } finally {
    await db.destroy();
  }
}
