import type { Message } from 'kafkajs';
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import {
  createOutboxMetrics,
  migrateOutbox,
  silentLogger,
  startRelay,
  type OutboxTables,
  type Worker,
} from '@outbox-inbox/outbox';
import { averagePayloadBytes, clearOutbox, writeBacklog } from '../backlog.ts';
import type { BenchContext } from '../context.ts';
import { benchDb } from '../database.ts';
import { baselineProducer, freshTopics } from '../kafka.ts';
import { startNaiveRelay, type NaiveRelay } from '../naive-relay.ts';
import { cpuTable, measureCpu, serverGroups, type CpuRun } from '../cpu.ts';
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

    const servers = serverGroups(ctx.stack);
    /** Times `work` (which returns how many events it published) and takes its CPU. */
    const timed = async (work: () => Promise<number>): Promise<CpuRun> => {
      const { result: events, cpu } = await measureCpu(servers, work);
      return { cpu, work: events };
    };
    const rateOf = (run: CpuRun) => run.work / run.cpu.wallSeconds;

    const raw = async (): Promise<CpuRun> => {
      const producer = baselineProducer(kafka);
      await producer.connect();
      const run = await timed(async () => {
        for (let i = 0; i < messages.length; i += settings.batchSize) {
          await producer.sendBatch({
            topicMessages: [
              { topic: RAW_TOPIC, messages: messages.slice(i, i + settings.batchSize) },
            ],
            acks: -1,
          });
        }
        return messages.length;
      });
      await producer.disconnect();
      return run;
    };

    const refill = async (events: number): Promise<void> => {
      await clearOutbox(db);
      await writeBacklog(db, { events, keys: settings.keys, topic: TOPIC });
      await sql`ANALYZE outbox_event`.execute(db);
    };

    const relay = async (): Promise<CpuRun> => {
      await refill(settings.drainEvents);
      const metrics = createOutboxMetrics(new Registry());
      let worker: Worker | undefined;
      const run = await timed(async () => {
        worker = await startRelay({
          db,
          kafka,
          logger: silentLogger,
          metrics,
          options: { batchSize: settings.batchSize, pollIntervalMs: 50 },
        });
        while (
          ((await metrics.publishedTotal.get()).values[0]?.value ?? 0) < settings.drainEvents
        ) {
          await sleep(10);
        }
        return settings.drainEvents;
      });
      await worker?.stop();
      return run;
    };

    const naive = (asWritten: boolean) => async (): Promise<CpuRun> => {
      await refill(settings.naiveEvents);
      let worker: NaiveRelay | undefined;
      const run = await timed(async () => {
        const started = performance.now();
        worker = await startNaiveRelay({ db, kafka, asWritten });
        while (
          performance.now() - started < settings.naiveSeconds * 1000 &&
          worker.published() < settings.naiveEvents
        ) {
          await sleep(20);
        }
        return worker.published();
      });
      await worker?.stop();
      return run;
    };

    // Warm-up: the broker's JIT and page cache, and this process's, before anything counts.
    ctx.log('B1 warm-up');
    await raw();
    const kinds = ['raw', 'relay', 'naive', 'guide'] as const;
    const run = { raw, relay, naive: naive(false), guide: naive(true) };
    const runs = {
      raw: [] as CpuRun[],
      relay: [] as CpuRun[],
      naive: [] as CpuRun[],
      guide: [] as CpuRun[],
    };
    for (let round = 0; round < settings.rounds; round++) {
      for (let k = 0; k < kinds.length; k++) {
        const kind = kinds[(k + round) % kinds.length] ?? 'raw';
        const measured = await run[kind]();
        runs[kind].push(measured);
        ctx.log(`B1 round ${round + 1} ${kind}: ${int(rateOf(measured))} events/s`);
      }
    }
    const rates = (kind: (typeof kinds)[number]) => runs[kind].map(rateOf);
    const perRound = (kind: (typeof kinds)[number]) =>
      spread(rates('relay').map((r, i) => r / (rates(kind)[i] ?? Number.NaN)));
    const relayToRaw = perRound('raw');
    const relayToNaive = perRound('naive');
    const relayToGuide = perRound('guide');
    const ratio = (v: number) => fixed(v);
    return {
      id: 'B1',
      title: 'Relay drain: one relay vs raw kafkajs producer vs the row-by-row relay',
      tables: [
        {
          headers: ['publisher', 'events/s median (min–max)', 'runs (events/s)'],
          rows: (
            [
              ['raw kafkajs sendBatch (A)', 'raw'],
              ['relay, 1 instance (default options)', 'relay'],
              ['row-by-row relay, looping at once (B)', 'naive'],
              ['row-by-row relay as written (fixedDelay 500 ms)', 'guide'],
            ] as const
          ).map(([name, kind]) => [
            name,
            showSpread(spread(rates(kind))),
            rates(kind).map(int).join(', '),
          ]),
        },
        {
          headers: ['ratio (per round, then median)', 'median (min–max)'],
          rows: [
            ['relay / raw', showSpread(relayToRaw, ratio)],
            ['relay / row-by-row, looping at once', showSpread(relayToNaive, ratio)],
            ['relay / row-by-row as written', showSpread(relayToGuide, (v) => fixed(v, 0))],
          ],
        },
        cpuTable({
          caption:
            'Where the CPU went (median over rounds, CPU-seconds per 100k events; bench = this Node process: the producer, the relay)',
          first: 'publisher',
          groups: ['bench', 'postgres', 'kafka'],
          measure: 'CPU-s per 100k',
          unit: 100_000,
          variants: [
            { name: 'raw kafkajs sendBatch (A)', runs: runs.raw },
            { name: 'relay', runs: runs.relay },
            { name: 'row-by-row, looping at once (B)', runs: runs.naive },
          ],
        }),
      ],
      notes: [
        `${int(settings.drainEvents)} events per relay and raw run, ~${payloadBytes}-byte JSON payloads, ${settings.keys} keys, ${settings.partitions} partitions, batch ${settings.batchSize}, acks -1, idempotent producer with 1 request in flight for all three.`,
        `The row-by-row relays are timed for ${settings.naiveSeconds} s per round (or until their ${int(settings.naiveEvents)}-row backlog is gone); their per-row cost does not depend on the backlog size. "Looping at once" is the guide's code without its schedule (the fairest baseline: its per-row cost); "as written" keeps \`@Scheduled(fixedDelay = 500)\`.`,
        `${settings.rounds} rounds, order rotated each round (raw→relay→naive→guide, relay→naive→guide→raw, …).`,
        `CPU is read from /proc before and after each timed run: the whole machine, this process, PostgreSQL's process tree and the Kafka JVM; "other" is everything else on the machine in that window (other users' load on a shared machine).`,
      ],
      targets: [
        {
          name: 'relay ≥ 0.6 × raw producer',
          goal: '≥ 0.60',
          measured: showSpread(relayToRaw, ratio),
          met: relayToRaw.median >= 0.6,
        },
        {
          name: 'relay ≥ 20 × row-by-row relay (looping at once)',
          goal: '≥ 20',
          measured: showSpread(relayToNaive, (v) => fixed(v, 1)),
          met: relayToNaive.median >= 20,
        },
        {
          name: 'relay ≥ 20 × row-by-row relay (as written, fixedDelay 500 ms)',
          goal: '≥ 20',
          measured: showSpread(relayToGuide, (v) => fixed(v, 0)),
          met: relayToGuide.median >= 20,
        },
      ],
    };
  } finally {
    await db.destroy();
  }
}
