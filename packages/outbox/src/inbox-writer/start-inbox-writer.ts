import { DEFAULT_CONSUMER_BACKOFF } from '../receive/consumer-settings.ts';
import { startGroupConsumer } from '../receive/start-group-consumer.ts';
import { outboxDb } from '../internal/views.ts';
import { createInboxNotifier } from '../enqueue/commit-notifier.ts';
import type { OutboxTables } from '../schema/tables.ts';
import type { Worker } from '../worker.ts';
import { InboxBatchWriter } from './batch-writer.ts';
import type { InboxWriterDeps } from './writer-deps.ts';

/**
 * The inbox writer (R-DIST-OBX-2's critical consumer): stores each Kafka batch's events in
 * `inbox_event` and only then commits its offset (see InboxBatchWriter); the processors are
 * woken when new rows are stored.
 */
export async function startInboxWriter<DB extends OutboxTables>(
  deps: InboxWriterDeps<DB>,
): Promise<Worker> {
  const processors = createInboxNotifier(outboxDb(deps.db), deps.logger);
  const backoff = Object.freeze({ ...DEFAULT_CONSUMER_BACKOFF, ...deps.options.backoff });
  const writer = new InboxBatchWriter(deps, backoff, processors);
  const consumer = await startGroupConsumer({
    worker: 'inbox-writer',
    kafka: deps.kafka,
    logger: deps.logger,
    metrics: deps.metrics,
    settings: deps.options,
    backoff,
    eachBatch: (batch, control) => writer.writeBatch(batch, control),
  });
  return {
    async stop() {
      await consumer.stop();
      await processors.idle();
    },
  };
}
