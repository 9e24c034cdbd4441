import { DEFAULT_CONSUMER_BACKOFF } from '../receive/consumer-settings.ts';
import { startGroupConsumer } from '../receive/start-group-consumer.ts';
import type { OutboxTables } from '../schema/tables.ts';
import type { Worker } from '../worker.ts';
import type { DedupConsumerDeps } from './dedup-deps.ts';
import { FetchApplier } from './fetch-applier.ts';

/**
 * The dedup consumer (R-DIST-OBX-2's ordinary consumer): each fetch's events are applied once,
 * a `processed_event` row in the effect's transaction (see FetchApplier), and the offset is
 * committed after them.
 */
export async function startDedupConsumer<DB extends OutboxTables>(
  deps: DedupConsumerDeps<DB>,
): Promise<Worker> {
  const backoff = Object.freeze({ ...DEFAULT_CONSUMER_BACKOFF, ...deps.options.backoff });
  const applier = new FetchApplier(deps, backoff);
  return startGroupConsumer({
    worker: 'dedup-consumer',
    kafka: deps.kafka,
    logger: deps.logger,
    metrics: deps.metrics,
    settings: deps.options,
    backoff,
    eachBatch: (batch, control) => applier.applyFetch(batch, control),
  });
}
