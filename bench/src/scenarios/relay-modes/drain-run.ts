import { sql } from 'kysely';
import { clearOutbox, writeBacklog } from '../../backlog.ts';
import { measureCpuRun, serverGroups, type CpuRun } from '../../cpu.ts';
import { topicRecordCount } from '../../kafka.ts';
import { rssMiB } from '../../rss.ts';
import { sleep } from '../../stats.ts';
import { DRAIN_TOPIC, type RelayModesBench, type RelaySystem } from './relay-modes-bench.ts';

/** A backlog builds up as many small transactions do while a relay is down, not as one. */
const ROWS_PER_TRANSACTION = 1000;
const DRAIN_TIMEOUT_MS = 600_000;

/** One drain of the backlog by one relay: its CPU, how long, and the publisher's memory. */
export interface DrainRun extends CpuRun {
  /** From letting the relay go to the first event on the topic. */
  readonly firstEventSeconds: number;
  /** From letting the relay go to the last event on the topic. */
  readonly totalSeconds: number;
  /** Resident set of the publishing process before the drain and at most during it. */
  readonly idleRssMiB: number;
  readonly maxRssMiB: number;
}

async function writeHeldBacklog(bench: RelayModesBench, system: RelaySystem): Promise<void> {
  const { drainEvents, keys } = bench.ctx.settings;
  for (let written = 0; written < drainEvents; written += ROWS_PER_TRANSACTION) {
    const events = Math.min(ROWS_PER_TRANSACTION, drainEvents - written);
    await writeBacklog(system.db, { events, keys, topic: DRAIN_TOPIC });
  }
  await sql`ANALYZE outbox_event`.execute(system.db);
}

/**
 * The relay is held (polling: SIGSTOP; CDC: the connector paused) while the backlog is written,
 * then let go; the run lasts until the topic holds every event. The outbox is emptied before the
 * hold, while the relay runs: a relay frozen inside its claim would hold a lock TRUNCATE waits on.
 */
export async function drainRun(bench: RelayModesBench, system: RelaySystem): Promise<DrainRun> {
  const events = bench.ctx.settings.drainEvents;
  await clearOutbox(system.db);
  await system.hold();
  await writeHeldBacklog(bench, system);
  const before = await topicRecordCount(bench.admin, DRAIN_TOPIC);
  const idleRssMiB = rssMiB(system.publisherPid()) ?? Number.NaN;
  let maxRssMiB = Number.isFinite(idleRssMiB) ? idleRssMiB : 0;
  let firstAt: number | undefined;
  const began = performance.now();
  const run = await measureCpuRun(
    { ...system.publisherGroups(), ...serverGroups(bench.ctx.stack) },
    async () => {
      await system.release();
      for (;;) {
        const published = (await topicRecordCount(bench.admin, DRAIN_TOPIC)) - before;
        maxRssMiB = Math.max(maxRssMiB, rssMiB(system.publisherPid()) ?? 0);
        if (published > 0) firstAt ??= performance.now();
        if (published >= events) return events;
        if (performance.now() - began > DRAIN_TIMEOUT_MS) {
          throw new Error(`B8 ${system.mode} drain: ${published} of ${events} after 10 min`);
        }
        await sleep(50);
      }
    },
  );
  const totalSeconds = (performance.now() - began) / 1000;
  const firstEventSeconds = ((firstAt ?? Number.NaN) - began) / 1000;
  return { ...run, firstEventSeconds, totalSeconds, idleRssMiB, maxRssMiB };
}
