import type { ColumnType, Generated, JSONColumnType } from 'kysely';

/** timestamptz: read as Date, written as Date or ISO string, defaulted by the database. */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<
  Date | null,
  Date | string | null | undefined,
  Date | string | null
>;
/** int8/xid8 come back from `pg` as strings (no precision loss). */
type Int8 = ColumnType<string, string | number | bigint, string | number | bigint>;

/** One event waiting for (or done with) publication to Kafka. */
export interface OutboxEventTable {
  /** Insertion order; the relay publishes each partition key in this order. */
  id: Generated<string>;
  event_id: string;
  aggregate_type: string;
  aggregate_id: string;
  event_type: string;
  /** Written as a JSON string (pg would turn a JS array into a PostgreSQL array). */
  payload: ColumnType<unknown, string, string>;
  /** Extra Kafka headers carried with the event, e.g. `traceparent`. */
  headers: JSONColumnType<Record<string, string>, string | undefined, string>;
  topic: string;
  partition_key: string;
  created_at: Timestamp;
  published_at: NullableTimestamp;
  /** `pg_current_xact_id()` of the writing transaction: the relay's commit-order fence. */
  transaction_id: ColumnType<string, never, never>;
  /** Times Kafka refused the row (or the relay's pre-send checks did). */
  publish_attempts: ColumnType<number, number | undefined, number>;
  /** Why the row was last refused. */
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
  /** Set aside by the relay (FAILED): holds back the later rows of its key until retried or skipped. */
  failed_at: NullableTimestamp;
  /** Skipped by an operator: `published_at` is set so the key moves on, but it was never sent. */
  skipped_at: NullableTimestamp;
}

/** A received event stored before it is handled (R-DIST-OBX-2). */
export interface InboxEventTable {
  event_id: string;
  /** Arrival order; the processor handles each partition key in this order. */
  seq: Generated<string>;
  consumer_group: string;
  event_type: string;
  aggregate_type: string;
  aggregate_id: string;
  partition_key: string;
  payload: ColumnType<unknown, string, string>;
  headers: JSONColumnType<Record<string, string>, string | undefined, string>;
  topic: string;
  kafka_partition: number;
  kafka_offset: Int8;
  occurred_at: Timestamp;
  received_at: Timestamp;
  processed: ColumnType<boolean, boolean | undefined, boolean>;
  processed_at: NullableTimestamp;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Timestamp;
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
  /** Set when the row exhausted its attempts; it then holds back later rows of its key. */
  dead_at: NullableTimestamp;
  /** Repeats of this event the writer dropped after the row was stored (0 for most rows). */
  redeliveries: ColumnType<number, number | undefined, number>;
}

/** Dedup rows of the dedup consumers: one per (consumer, event) whose effect was applied. */
export interface ProcessedEventTable {
  consumer: string;
  event_id: string;
  processed_at: Timestamp;
  /** Repeats of this event the consumer dropped after applying it once (0 for most rows). */
  redeliveries: ColumnType<number, number | undefined, number>;
}

/** A Kafka message that could not be accepted (not JSON, no event id, failed validation...). */
export interface ParkedMessageTable {
  id: Generated<string>;
  /** Consumer group (inbox writer) or consumer name (dedup consumer) that parked it. */
  consumer: string;
  topic: string;
  kafka_partition: number;
  kafka_offset: Int8;
  /** The raw bytes, exactly as received. */
  message_key: ColumnType<Buffer | null, Buffer | null | undefined, Buffer | null>;
  message_value: ColumnType<Buffer | null, Buffer | null | undefined, Buffer | null>;
  /**
   * The headers, losslessly and in received order: `header_names[i]` (the name's UTF-8 bytes)
   * carries `header_values[i]` (raw bytes; NULL for a header without a value). A name that
   * repeats appears once per value. `readParkedMessages` returns them as pairs.
   */
  header_names: ColumnType<Buffer[], Buffer[] | undefined, Buffer[]>;
  header_values: ColumnType<(Buffer | null)[], (Buffer | null)[] | undefined, (Buffer | null)[]>;
  reason: string;
  parked_at: Timestamp;
}

/** The library's tables; a service's database interface extends this. */
export interface OutboxTables {
  outbox_event: OutboxEventTable;
  inbox_event: InboxEventTable;
  processed_event: ProcessedEventTable;
  parked_message: ParkedMessageTable;
}
