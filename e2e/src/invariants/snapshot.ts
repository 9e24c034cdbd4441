import type { AcceptedOrder } from '../load-generator.ts';
import type { TopicMessage } from '../topic-reader.ts';

/** One outbox row, as the invariants need it. */
export interface OutboxEntry {
  readonly id: bigint;
  readonly eventId: string;
  readonly eventType: string;
  readonly partitionKey: string;
  readonly published: boolean;
}

/** One event applied to an order, in the order applied (order_history / payment_history). */
export interface Application {
  readonly orderId: string;
  readonly eventId: string;
  readonly eventType: string;
}

export interface ParkedEntry {
  readonly database: 'orders' | 'payments';
  readonly consumer: string;
  readonly topic: string;
  /** Where the message was on its topic. */
  readonly partition: number;
  readonly offset: string;
  readonly reason: string;
  /** The event_id header as stored, when the message had one. */
  readonly eventId: string | undefined;
}

/**
 * Everything the invariants look at, read once after the system settled: both databases and
 * both topics. The checks are pure functions of it, so each can be shown to fail on a
 * snapshot with the guarantee broken (invariants.test.ts).
 */
export interface SystemSnapshot {
  /** Orders whose create request got a 201, as the load generator saw them. */
  readonly accepted: readonly AcceptedOrder[];
  readonly orders: readonly {
    readonly id: string;
    readonly status: string;
    readonly paymentStatus: string | null;
  }[];
  /** Every payments row (one per order is the guarantee under test). */
  readonly payments: readonly { readonly orderId: string; readonly status: string }[];
  readonly orderOutbox: readonly OutboxEntry[];
  readonly paymentOutbox: readonly OutboxEntry[];
  readonly inbox: readonly {
    readonly eventId: string;
    readonly partitionKey: string;
    readonly processed: boolean;
    readonly dead: boolean;
    /** The handler's last error, for a row that failed (a dead one: why it went dead). */
    readonly lastError?: string | undefined;
  }[];
  /** order-service's applications of payment events, in seq order. */
  readonly orderHistory: readonly Application[];
  /** payment-service's applications of order events, in seq order. */
  readonly paymentHistory: readonly Application[];
  readonly parked: readonly ParkedEntry[];
  readonly orderTopic: readonly TopicMessage[];
  readonly paymentTopic: readonly TopicMessage[];
  /** Completed runs of each service's retention role, read from its metrics at the end. */
  readonly retentionRuns: readonly RetentionRuns[];
}

export interface RetentionRuns {
  readonly service: string;
  /** `outbox_retention_runs_total{outcome="completed"}`; undefined when it did not answer. */
  readonly completed: number | undefined;
  /** `outbox_retention_deleted_rows_total` by table. */
  readonly deleted: Readonly<Record<string, number>>;
}

/** What a scenario expects besides "nothing wrong". */
export interface InvariantExpectations {
  /** Amounts above it fail payment. */
  readonly paymentLimit: number;
  /** Dead inbox rows the scenario caused on purpose. */
  readonly dead?: number;
  /** Parked messages the scenario injected on purpose (garbage on a topic). */
  readonly isInjectedGarbage?: (parked: ParkedEntry) => boolean;
  /** Messages the scenario produced to a topic itself (garbage): no outbox row stands behind them. */
  readonly isInjectedMessage?: (at: {
    readonly topic: string;
    readonly partition: number;
    readonly offset: string;
  }) => boolean;
  /**
   * Outbox rows the scenario wrote itself, outside any order (rows Kafka must refuse): not
   * part of any order's story, never to be found on a topic.
   */
  readonly isInjectedOutboxRow?: (row: OutboxEntry) => boolean;
  /**
   * Most times one event may be on a topic beyond its first delivery and the copies the
   * scenario produced itself (`injectedCopies`): a bound on redelivery, where a scenario has
   * one. Unset: any number (relays killed at random resend batches any number of times).
   */
  readonly redeliveryLimit?: number;
  /**
   * Orders the scenario invented: it produced valid events about them to the topics itself, and
   * every trace of them (inbox rows, payments, payment events, applications) is its own story,
   * checked by the scenario, not part of the accepted orders'.
   */
  readonly isInjectedOrder?: (orderId: string) => boolean;
  /**
   * The scenario runs retention with windows shorter than itself: published outbox rows and
   * processed inbox and processed_event rows go while it runs, so what each sender published is
   * read from its topic, and the proof of no loss and no double effect is each order's final
   * state and its applications. Lists, per service, the tables retention must have deleted from.
   */
  readonly shortRetention?: Readonly<Record<string, readonly string[]>>;
  /** Copies of our events the scenario produced to the topics itself, by event id. */
  readonly injectedCopies?: ReadonlyMap<string, number>;
}
