import type { Stack } from '@outbox-inbox/infra';
import type { Kafka } from 'kafkajs';
import type { Section } from './report.ts';
import type { BenchSettings } from './settings.ts';

/** What every scenario gets: the stack it runs on, a Kafka client, the sizes, a progress log. */
export interface BenchContext {
  readonly stack: Stack;
  readonly kafka: Kafka;
  readonly settings: BenchSettings;
  log(message: string): void;
}

/** One benchmark: sets up, measures, and reports its section of docs/benchmarks.md. */
export interface Scenario {
  readonly id: string;
  run(ctx: BenchContext): Promise<Section>;
}

/**
 * A benchmark in its three parts: `setUp` builds what it measures on, `measure` runs it (side
 * by side where there are variants), `report` turns the runs into its section; `tearDown`
 * runs whatever happens.
 */
export function defineScenario<Bench, Measured>(parts: {
  readonly id: string;
  setUp(ctx: BenchContext): Promise<Bench>;
  measure(ctx: BenchContext, bench: Bench): Promise<Measured>;
  report(ctx: BenchContext, bench: Bench, measured: Measured): Section;
  tearDown(bench: Bench): Promise<void>;
}): Scenario {
  return {
    id: parts.id,
    async run(ctx) {
      const bench = await parts.setUp(ctx);
      try {
        return parts.report(ctx, bench, await parts.measure(ctx, bench));
      } finally {
        await parts.tearDown(bench);
      }
    },
  };
}
