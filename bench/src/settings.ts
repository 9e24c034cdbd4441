/** Sizes of one `pnpm bench` run. Quick mode is a smoke check (~1 min); full mode is what docs/benchmarks.md reports. */
export interface BenchSettings {
  readonly mode: 'quick' | 'full';
  /** B1: backlog drained by the relay and sent by the raw producer, per run. */
  readonly drainEvents: number;
  /** B1: backlog the naive relay works on (it is only ever timed on a prefix). */
  readonly naiveEvents: number;
  /** B1: the naive relay runs this long per round; its rate is steady, so a prefix is enough. */
  readonly naiveSeconds: number;
  /** Events per claim / sendBatch for the relay and the raw producer alike. */
  readonly batchSize: number;
  readonly keys: number;
  readonly partitions: number;
  /** B1, B2, B4, B5: alternating rounds; results are medians with min and max. */
  readonly rounds: number;
  /** B2: relays side by side. */
  readonly relayCounts: readonly number[];
  readonly scaleEvents: number;
  /** B3: offered orders per second and how long each is held. */
  readonly latencyRates: readonly number[];
  readonly latencySeconds: number;
  /** B4: autocannon run length and connections. */
  readonly writeSeconds: number;
  readonly writeConnections: number;
  /** B5: messages ingested per run; processor burst size and concurrencies. */
  readonly inboxMessages: number;
  readonly processorMessages: number;
  readonly processorConcurrency: readonly number[];
  readonly handlerMs: number;
  /** B6: backlog for the memory run; 0 skips it (quick mode). */
  readonly memoryEvents: number;
  /** B7: seconds each offered rate is held, the first rate, the factor between rates. */
  readonly capacitySeconds: number;
  readonly capacityStartRate: number;
  readonly capacityGrowth: number;
  /** B7: rates tried per variant at most (the search halves the gap after the first miss). */
  readonly capacitySteps: number;
  /** B10: orders offered at `roundTripRate` per second while statements are counted. */
  readonly roundTripOrders: number;
  readonly roundTripRate: number;
  /** B9: seconds idle and at each ordinary rate, and those rates (orders/s). */
  readonly ordinarySeconds: number;
  readonly ordinaryRates: readonly number[];
  /** B9's long step: its rate (about a third of B7's capacity) and windows compared for drift. */
  readonly longRate: number;
  readonly longWindows: number;
  readonly longWindowSeconds: number;
  /** B9: seconds each role is CPU-profiled at `profileRate` orders/s. */
  readonly profileSeconds: number;
  readonly profileRate: number;
}

const full: BenchSettings = Object.freeze({
  mode: 'full',
  drainEvents: 100_000,
  naiveEvents: 20_000,
  naiveSeconds: 10,
  batchSize: 500,
  keys: 1000,
  partitions: 6,
  rounds: 3,
  relayCounts: Object.freeze([1, 2, 4]),
  scaleEvents: 100_000,
  latencyRates: Object.freeze([200, 1000]),
  latencySeconds: 20,
  writeSeconds: 10,
  writeConnections: 16,
  inboxMessages: 100_000,
  processorMessages: 10_000,
  processorConcurrency: Object.freeze([1, 4, 16]),
  handlerMs: 5,
  memoryEvents: 1_000_000,
  capacitySeconds: 60,
  capacityStartRate: 200,
  capacityGrowth: 1.6,
  capacitySteps: 8,
  roundTripOrders: 3000,
  roundTripRate: 30,
  ordinarySeconds: 120,
  ordinaryRates: Object.freeze([10, 30, 60]),
  longRate: 45,
  longWindows: 4,
  longWindowSeconds: 300,
  profileSeconds: 60,
  profileRate: 30,
});

const quick: BenchSettings = Object.freeze({
  ...full,
  mode: 'quick',
  drainEvents: 5000,
  naiveEvents: 2000,
  naiveSeconds: 2,
  rounds: 1,
  scaleEvents: 5000,
  latencyRates: Object.freeze([200, 500]),
  latencySeconds: 3,
  writeSeconds: 3,
  inboxMessages: 5000,
  processorMessages: 500,
  processorConcurrency: Object.freeze([1, 4]),
  memoryEvents: 0,
  capacitySeconds: 5,
  capacityStartRate: 100,
  capacitySteps: 2,
  roundTripOrders: 300,
  ordinarySeconds: 10,
  longWindows: 2,
  longWindowSeconds: 10,
  profileSeconds: 10,
});

/** `--quick` or BENCH_QUICK=1 picks the smoke sizes; `--only B1,B3` (or BENCH_ONLY) runs a subset. */
export function parseSettings(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): { settings: BenchSettings; only: ReadonlySet<string> | undefined } {
  const isQuick = argv.includes('--quick') || env['BENCH_QUICK'] === '1';
  const onlyIndex = argv.indexOf('--only');
  const onlyValue = onlyIndex >= 0 ? argv[onlyIndex + 1] : env['BENCH_ONLY'];
  const only = onlyValue
    ? new Set(onlyValue.split(',').map((s) => s.trim().toUpperCase()))
    : undefined;
  const base = isQuick ? quick : full;
  // BENCH_MEMORY_EVENTS overrides B6's backlog (e.g. a small one to try B6 in quick mode).
  const memoryEvents = Number(env['BENCH_MEMORY_EVENTS'] ?? base.memoryEvents);
  // BENCH_LONG_WINDOWS overrides B9's long step (0 leaves it out: a quicker look at idle and rates).
  const longWindows = Number(env['BENCH_LONG_WINDOWS'] ?? base.longWindows);
  return { settings: Object.freeze({ ...base, memoryEvents, longWindows }), only };
}
