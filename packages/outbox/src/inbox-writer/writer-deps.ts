import type { Kysely } from 'kysely';
import type { KafkaClient } from '../kafka-port/kafka-client.ts';
import type { Logger } from '../logger.ts';
import type { OutboxMetrics } from '../ops/metrics.ts';
import type { OutboxTables } from '../schema/tables.ts';
import type { InboxWriterHooks, InboxWriterOptions } from './writer-options.ts';

export interface InboxWriterDeps<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  readonly kafka: KafkaClient;
  readonly logger: Logger;
  readonly metrics?: OutboxMetrics;
  readonly options: InboxWriterOptions;
  /** Fault-injection moments of the e2e suite; none in a deployment. */
  readonly hooks?: InboxWriterHooks;
}
