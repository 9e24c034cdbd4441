import type { Kysely, Transaction } from 'kysely';
import type { KafkaClient } from '../kafka-port/kafka-client.ts';
import type { ReceivedEvent } from '../receive/received-event.ts';
import type { Logger } from '../logger.ts';
import type { OutboxMetrics } from '../ops/metrics.ts';
import type { OutboxTables } from '../schema/tables.ts';
import type { DedupConsumerHooks, DedupConsumerOptions } from './dedup-options.ts';

interface DedupConsumerBase<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  readonly kafka: KafkaClient;
  readonly logger: Logger;
  readonly metrics?: OutboxMetrics;
  readonly options: DedupConsumerOptions;
  /** Fault-injection moments of the e2e suite; none in a deployment. */
  readonly hooks?: DedupConsumerHooks;
}

/**
 * The effect, in one of two forms. Both run in the transaction that writes the events'
 * `processed_event` rows, and see only first deliveries (repeats are dropped before), in offset
 * order. `handle`, one event at a time, is the simple form to start with; `handleBatch` gets a
 * fetch's new events at once, so an effect can be written with a constant number of statements.
 */
export type DedupEffect<DB extends OutboxTables> =
  | {
      /** The effect of one event. */
      readonly handle: (trx: Transaction<DB>, event: ReceivedEvent) => Promise<void>;
      readonly handleBatch?: undefined;
    }
  | {
      /**
       * The effect of a set of events, to be applied in the order given (several events of one
       * key may be in it). When it throws, the set is rolled back and split in halves, each
       * applied on its own, until the failing event is alone: so it must not depend on which
       * events share its call.
       */
      readonly handleBatch: (
        trx: Transaction<DB>,
        events: readonly ReceivedEvent[],
      ) => Promise<void>;
      readonly handle?: undefined;
    };

export type DedupConsumerDeps<DB extends OutboxTables> = DedupConsumerBase<DB> & DedupEffect<DB>;
