import { migrateService } from '@outbox-inbox/launcher';
import type { OutboxTables } from '@outbox-inbox/outbox';
import { orderService } from '@outbox-inbox/order-service';
import type { Kysely } from 'kysely';
import { clearOutbox, unpublishedLeft, writeBacklog } from '../../backlog.ts';
import { defineScenario, type BenchContext, type Scenario } from '../../context.ts';
import { benchDb } from '../../database.ts';
import { freshTopics } from '../../kafka.ts';
import type { Section } from '../../report.ts';
import { runRounds, runsOf } from '../../rounds.ts';
import { startRole } from '../../services.ts';
import { fixed, int, showSpread, sleep, spread } from '../../stats.ts';

const TOPIC = 'bench.scale';

interface ScalingBench {
  readonly ctx: BenchContext;
  readonly url: string;
  readonly db: Kysely<OutboxTables>;
  /** Relay processes started so far: each gets a component name of its own. */
  started: number;
}

async function setUpScaling(ctx: BenchContext): Promise<ScalingBench> {
  const url = await ctx.stack.createDatabase('bench_scale');
  await migrateService(orderService, url);
  await freshTopics(ctx.kafka, [{ topic: TOPIC, partitions: ctx.settings.partitions }]);
  return { ctx, url, db: benchDb<OutboxTables>(url), started: 0 };
}

/**
 * `relays` order-service relay processes, started first and idle; the backlog commits in one
 * transaction (NOTIFY at commit) and the clock runs from that commit until no unpublished row
 * is left. Returns events per second.
 */
async function drainWith(bench: ScalingBench, relays: number, round: number): Promise<number> {
  const { ctx, db } = bench;
  const { settings } = ctx;
  await clearOutbox(db);
  const processes = await Promise.all(
    Array.from({ length: relays }, () =>
      startRole(ctx.stack, {
        component: `b2-relay-${++bench.started}`,
        service: orderService,
        role: 'relay',
        databaseUrl: bench.url,
        settings: {
          RELAY_BATCH_SIZE: String(settings.batchSize),
          RELAY_POLL_INTERVAL_MS: '100',
        },
      }),
    ),
  );
  // Let the relays settle (connections, first empty claim) before the backlog lands.
  await sleep(500);
  const insertStarted = performance.now();
  await writeBacklog(db, { events: settings.scaleEvents, keys: settings.keys, topic: TOPIC });
  const committed = performance.now();
  while (await unpublishedLeft(db)) await sleep(20);
  const rate = settings.scaleEvents / ((performance.now() - committed) / 1000);
  await Promise.all(processes.map((relay) => relay.stop()));
  ctx.log(
    `B2 round ${round + 1}, ${relays} relay(s): ${int(rate)} events/s (backlog insert ${fixed((committed - insertStarted) / 1000, 1)} s)`,
  );
  return rate;
}

function scalingSection(ctx: BenchContext, rates: ReadonlyMap<number, readonly number[]>): Section {
  const { settings } = ctx;
  const one = spread(runsOf(rates, 1));
  return {
    id: 'B2',
    title: 'Relay scaling: 1, 2 and 4 relay processes on one backlog',
    tables: [
      {
        headers: ['relays', 'events/s median (min–max)', 'vs 1 relay', 'runs (events/s)'],
        rows: settings.relayCounts.map((n) => {
          const s = spread(runsOf(rates, n));
          return [
            String(n),
            showSpread(s),
            fixed(s.median / one.median),
            s.runs.map(int).join(', '),
          ];
        }),
      },
    ],
    notes: [
      `${int(settings.scaleEvents)} events per run, ${settings.keys} keys, ${settings.partitions} partitions, batch ${settings.batchSize}; each relay is an order-service process (\`--roles relay\`).`,
      'The machine has 2 cores shared by PostgreSQL, Kafka, the relays and the bench: more relays add claim contention and context switches, not CPU.',
    ],
    targets: [],
  };
}

/** B2: 1, 2 and 4 order-service relay processes (the real role) drain the same backlog. */
export const relayScaling: Scenario = defineScenario({
  id: 'B2',
  setUp: setUpScaling,
  measure: (ctx, bench: ScalingBench) =>
    runRounds(ctx.settings.relayCounts, ctx.settings.rounds, (n, round) =>
      drainWith(bench, n, round),
    ),
  report: (ctx, _bench, rates) => scalingSection(ctx, rates),
  tearDown: (bench) => bench.db.destroy(),
});
