import { migrateOutbox, type OutboxTables } from '@outbox-inbox/outbox';
import { defineScenario, type BenchContext, type Scenario } from '../../context.ts';
import { serverGroups, type CpuUse } from '../../cpu.ts';
import { benchDb } from '../../database.ts';
import { benchClients, freshTopics } from '../../kafka.ts';
import { runRounds } from '../../rounds.ts';
import { int } from '../../stats.ts';
import { inboxSection, type IngestVariant } from './inbox-section.ts';
import {
  INBOX_TOPIC,
  fillInboxTopic,
  inboxWriterRun,
  rawConsumerRun,
  type IngestBench,
} from './ingest.ts';
import { processorRun, type BurstRun } from './processor-burst.ts';

async function setUpInbox(ctx: BenchContext): Promise<IngestBench> {
  const { settings, kafka } = ctx;
  const db = benchDb<OutboxTables>(await ctx.stack.createDatabase('bench_inbox'), 8);
  await migrateOutbox(db);
  await freshTopics(kafka, [{ topic: INBOX_TOPIC, partitions: settings.partitions }]);
  await fillInboxTopic(kafka, settings);
  return {
    db,
    kafka,
    clients: benchClients(kafka, ctx.stack.kafkaBrokers),
    settings,
    servers: serverGroups(ctx.stack),
    groups: 0,
  };
}

/** Both readers on the same topic, rounds side by side after a warm-up of the raw one. */
async function measureIngest(
  ctx: BenchContext,
  bench: IngestBench,
): Promise<Map<IngestVariant, CpuUse[]>> {
  ctx.log('B5 warm-up');
  await rawConsumerRun(bench);
  const variants: readonly IngestVariant[] = ['raw', 'writer', 'writer-platformatic'];
  return runRounds(variants, ctx.settings.rounds, async (variant, round) => {
    const use =
      variant === 'raw'
        ? await rawConsumerRun(bench)
        : await inboxWriterRun(bench, variant === 'writer' ? 'kafkajs' : 'platformatic');
    ctx.log(
      `B5 round ${round + 1} ${variant}: ${int(ctx.settings.inboxMessages / use.wallSeconds)} messages/s`,
    );
    return use;
  });
}

async function measureProcessor(ctx: BenchContext, bench: IngestBench): Promise<BurstRun[]> {
  const runs: BurstRun[] = [];
  for (const concurrency of ctx.settings.processorConcurrency) {
    const run = await processorRun(bench.db, ctx.settings, concurrency);
    runs.push(run);
    ctx.log(`B5 processor concurrency ${concurrency}: ${int(run.rate)} events/s`);
  }
  return runs;
}

/**
 * B5: (1) ingest: the inbox writer (store + commit offset per batch) against a raw kafkajs
 * consumer that only counts, both reading the same topic from the beginning with a fresh
 * group, side by side, and the inbox writer again on the port's second client; (2) the processor draining a burst with a 5 ms handler (the style
 * guide's example: 10k messages, 5 ms each) at several concurrencies.
 */
export const inbox: Scenario = defineScenario({
  id: 'B5',
  setUp: setUpInbox,
  measure: async (ctx, bench) => ({
    ingest: await measureIngest(ctx, bench),
    processor: await measureProcessor(ctx, bench),
  }),
  report: (ctx, _bench, { ingest, processor }) => inboxSection(ctx.settings, ingest, processor),
  tearDown: (bench) => bench.db.destroy(),
});
