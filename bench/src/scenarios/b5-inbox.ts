import { randomUUID } from 'node:crypto';
import type { Message } from 'kafkajs';
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import {
  createOutboxMetrics,
  migrateOutbox,
  silentLogger,
  startInboxProcessor,
  startInboxWriter,
  type OutboxTables,
} from '@outbox-inbox/outbox';
import type { BenchContext } from '../context.ts';
import { benchDb } from '../database.ts';
import { baselineProducer, freshTopics } from '../kafka.ts';
import { cpuTable, serverGroups, startCpuMeter, type CpuRun, type CpuUse } from '../cpu.ts';
import type { Section } from '../report.ts';
import { fixed, int, showSpread, sleep, spread } from '../stats.ts';

const TOPIC = 'bench.inbox';

/**
 * From the first message seen to `count() >= total`, polled every 10 ms for both the raw
 * consumer and the inbox writer (group join and the first fetch are not counted for either):
 * the seconds, and the CPU used in that same window.
 */
async function fromFirst(
  count: () => Promise<number> | number,
  total: number,
  groups: Readonly<Record<string, number | undefined>>,
): Promise<CpuUse> {
  let meter: { stop(): CpuUse } | undefined;
  for (;;) {
    const seen = await count();
    if (seen > 0 && meter === undefined) meter = startCpuMeter(groups);
    if (seen >= total && meter !== undefined) return meter.stop();
    await sleep(10);
  }
}

/**
 * B5: (1) ingest: the inbox writer (store + commit offset per batch) against a raw kafkajs
 * consumer that only counts, both reading the same topic from the beginning with a fresh
 * group, alternating; (2) the processor draining a burst with a 5 ms handler (the style
 * guide's example: 10k messages, 5 ms each) at several concurrencies.
 */
export async function inbox(ctx: BenchContext): Promise<Section> {
  const { settings, kafka } = ctx;
  const url = await ctx.stack.createDatabase('bench_inbox');
  const db = benchDb<OutboxTables>(url, 8);
  try {
    await migrateOutbox(db);
    await freshTopics(kafka, [{ topic: TOPIC, partitions: settings.partitions }]);

    // The topic: relay-shaped events (headers as the relay writes them), ~500-byte payloads.
    const producer = baselineProducer(kafka);
    await producer.connect();
    const note = 'x'.repeat(300);
    for (let i = 0; i < settings.inboxMessages; i += settings.batchSize) {
      const messages: Message[] = [];
      for (let j = i; j < Math.min(i + settings.batchSize, settings.inboxMessages); j++) {
        const key = `order-${j % settings.keys}`;
        messages.push({
          key,
          value: JSON.stringify({
            schemaVersion: 1,
            orderId: key,
            customerId: `customer-${j % 997}`,
            amount: 1000 + j,
            currency: 'EUR',
            seq: j,
            note,
          }),
          headers: {
            event_id: randomUUID(),
            event_type: 'OrderCreated',
            aggregate_type: 'order',
            aggregate_id: key,
            occurred_at: new Date().toISOString(),
          },
        });
      }
      await producer.sendBatch({ topicMessages: [{ topic: TOPIC, messages }], acks: -1 });
    }
    await producer.disconnect();

    let group = 0;
    const servers = serverGroups(ctx.stack);
    const raw = async (): Promise<CpuUse> => {
      let seen = 0;
      const consumer = kafka.consumer({ groupId: `bench-raw-${++group}` });
      await consumer.connect();
      await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
      // Counts and lets kafkajs resolve and commit offsets as it does by default.
      await consumer.run({ eachBatch: async ({ batch }) => void (seen += batch.messages.length) });
      const cpu = await fromFirst(() => seen, settings.inboxMessages, servers);
      await consumer.disconnect();
      return cpu;
    };
    const writer = async (): Promise<CpuUse> => {
      await sql`TRUNCATE inbox_event`.execute(db);
      const metrics = createOutboxMetrics(new Registry());
      const worker = await startInboxWriter({
        db,
        kafka,
        logger: silentLogger,
        metrics,
        options: { groupId: `bench-inbox-${++group}`, topics: [TOPIC] },
      });
      const cpu = await fromFirst(
        async () => (await metrics.inboxReceivedTotal.get()).values[0]?.value ?? 0,
        settings.inboxMessages,
        servers,
      );
      await worker.stop();
      return cpu;
    };

    ctx.log('B5 warm-up');
    await raw();
    const rawRuns: number[] = [];
    const writerRuns: number[] = [];
    const cpu = { raw: [] as CpuRun[], writer: [] as CpuRun[] };
    for (let round = 0; round < settings.rounds; round++) {
      const order = round % 2 === 0 ? (['raw', 'writer'] as const) : (['writer', 'raw'] as const);
      for (const kind of order) {
        const use = kind === 'raw' ? await raw() : await writer();
        const rate = settings.inboxMessages / use.wallSeconds;
        (kind === 'raw' ? rawRuns : writerRuns).push(rate);
        cpu[kind].push({ cpu: use, work: settings.inboxMessages });
        ctx.log(`B5 round ${round + 1} ${kind}: ${int(rate)} messages/s`);
      }
    }
    const ingestRatio = spread(writerRuns.map((w, i) => w / (rawRuns[i] ?? Number.NaN)));

    // The burst: rows as the writer stores them, then the processor with a 5 ms handler.
    const processorRuns: { concurrency: number; rate: number; seconds: number }[] = [];
    for (const concurrency of settings.processorConcurrency) {
      await sql`TRUNCATE inbox_event`.execute(db);
      await sql`
        INSERT INTO inbox_event (event_id, consumer_group, event_type, aggregate_type, aggregate_id,
          partition_key, payload, topic, kafka_partition, kafka_offset, occurred_at)
        SELECT gen_random_uuid(), 'bench', 'OrderCreated', 'order', 'order-' || (i % ${settings.keys}),
          'order-' || (i % ${settings.keys}), jsonb_build_object('seq', i, 'note', repeat('x', 300)),
          ${TOPIC}, i % ${settings.partitions}, i, now()
        FROM generate_series(1, ${settings.processorMessages}) AS i`.execute(db);
      await sql`VACUUM ANALYZE inbox_event`.execute(db);
      const metrics = createOutboxMetrics(new Registry());
      const started = performance.now();
      const worker = startInboxProcessor({
        db,
        logger: silentLogger,
        metrics,
        handlers: { OrderCreated: () => sleep(settings.handlerMs) },
        options: { concurrency, pollIntervalMs: 50 },
      });
      while (
        ((await metrics.inboxProcessedTotal.get()).values[0]?.value ?? 0) <
        settings.processorMessages
      ) {
        await sleep(10);
      }
      const seconds = (performance.now() - started) / 1000;
      await worker.stop();
      processorRuns.push({ concurrency, seconds, rate: settings.processorMessages / seconds });
      ctx.log(
        `B5 processor concurrency ${concurrency}: ${int(settings.processorMessages / seconds)} events/s`,
      );
    }

    const ratio = (v: number) => fixed(v);
    return {
      id: 'B5',
      title: 'Inbox: writer ingest vs raw kafkajs consumer; processor with a 5 ms handler',
      tables: [
        {
          headers: ['reader', 'messages/s median (min–max)', 'runs (messages/s)'],
          rows: [
            [
              'raw kafkajs consumer (counts only)',
              showSpread(spread(rawRuns)),
              rawRuns.map(int).join(', '),
            ],
            [
              'inbox writer (INSERT … ON CONFLICT, commit offsets)',
              showSpread(spread(writerRuns)),
              writerRuns.map(int).join(', '),
            ],
            ['ratio inbox / raw (per round)', showSpread(ingestRatio, ratio), ''],
          ],
        },
        cpuTable({
          caption:
            'Where the CPU went while ingesting (median over rounds, CPU-seconds per 100k messages; bench = this process: the consumer, the writer)',
          first: 'reader',
          groups: ['bench', 'postgres', 'kafka'],
          measure: 'CPU-s per 100k',
          unit: 100_000,
          variants: [
            { name: 'raw kafkajs consumer', runs: cpu.raw },
            { name: 'inbox writer', runs: cpu.writer },
          ],
        }),
        {
          caption: `Processor: ${int(settings.processorMessages)} inbox rows over ${settings.keys} keys, handler sleeps ${settings.handlerMs} ms`,
          headers: [
            'concurrency',
            'events/s',
            'seconds',
            'ceiling (concurrency × 1000 / 5 ms)',
            'of ceiling',
          ],
          rows: processorRuns.map((r) => {
            const ceiling = (r.concurrency * 1000) / settings.handlerMs;
            return [
              String(r.concurrency),
              int(r.rate),
              fixed(r.seconds, 1),
              int(ceiling),
              `${fixed((r.rate / ceiling) * 100, 0)} %`,
            ];
          }),
        },
      ],
      notes: [
        `${int(settings.inboxMessages)} messages (~500-byte JSON, ${settings.keys} keys, ${settings.partitions} partitions) per ingest run; a fresh consumer group each run; timed from the first message seen to the last, polled every 10 ms for both readers.`,
        "The processor runs each row in its own transaction (claim the key's head FOR UPDATE SKIP LOCKED, handler, mark processed), as R-DIST-OBX-2 asks.",
      ],
      targets: [
        {
          name: 'inbox ingest ≥ 0.6 × raw consumer',
          goal: '≥ 0.60',
          measured: showSpread(ingestRatio, ratio),
          met: ingestRatio.median >= 0.6,
        },
      ],
    };
  } finally {
    await db.destroy();
  }
}
