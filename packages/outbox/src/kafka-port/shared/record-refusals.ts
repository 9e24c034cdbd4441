/**
 * What a broker's error says about the records of a produce request, shared by every adapter
 * so the relay sees the same outcomes on either client. Kafka's names are used throughout;
 * where kafkajs still uses a name Kafka has since changed, both stand in the lists.
 */

/** Refusals of the records themselves: sending them again cannot help. */
export const FINAL_REFUSALS: ReadonlySet<string> = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_TOPIC_EXCEPTION',
  'INVALID_RECORD',
  'INVALID_TIMESTAMP',
]);

/** Retriable for Kafka, but they may be lasting: counted against the row, not final. */
export const COUNTED_RETRIABLE: ReadonlySet<string> = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'CORRUPT_MESSAGE',
]);

/**
 * A cluster in transition: a leader moved or died, the in-sync replicas are fewer than the
 * topic's `min.insync.replicas`, the controller quorum is lost. They pass when the cluster
 * heals, whatever the client flags them, so they never count against a row: the batch waits.
 * NOT_ENOUGH_REPLICAS_AFTER_APPEND was written but not acknowledged: sent again, a duplicate.
 */
const CLUSTER_TRANSITIONS = [
  'NOT_ENOUGH_REPLICAS',
  'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
  'NOT_LEADER_OR_FOLLOWER',
  'NOT_LEADER_FOR_PARTITION', // kafkajs's name
  'LEADER_NOT_AVAILABLE',
  'FENCED_LEADER_EPOCH',
  'UNKNOWN_LEADER_EPOCH',
  'REQUEST_TIMED_OUT',
  'NETWORK_EXCEPTION',
  'BROKER_NOT_AVAILABLE',
  'REPLICA_NOT_AVAILABLE',
  'KAFKA_STORAGE_ERROR',
  // A new idempotent producer gets it while no controller quorum hands out producer ids.
  'COORDINATOR_LOAD_IN_PROGRESS',
  'GROUP_LOAD_IN_PROGRESS', // kafkajs's name
  'COORDINATOR_NOT_AVAILABLE',
  'GROUP_COORDINATOR_NOT_AVAILABLE', // kafkajs's name
  'NOT_COORDINATOR',
  'NOT_COORDINATOR_FOR_GROUP', // kafkajs's name
  'NOT_CONTROLLER',
];

/** Non-retriable errors about the producer's own state, not about records: start afresh. */
const PRODUCER_STATE = [
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'DUPLICATE_SEQUENCE_NUMBER',
  'INVALID_PRODUCER_EPOCH',
  'UNKNOWN_PRODUCER_ID',
  'INVALID_PRODUCER_ID_MAPPING',
  'CLUSTER_AUTHORIZATION_FAILED',
  'INVALID_REQUIRED_ACKS',
  'UNSUPPORTED_VERSION',
];

/** Errors about the cluster or the producer, never about the records, however flagged. */
const OUTAGES: ReadonlySet<string> = new Set([...CLUSTER_TRANSITIONS, ...PRODUCER_STATE]);

/** Records the broker refused: `final` when sending them again cannot help. */
export interface RefusedRecords {
  readonly kind: 'refused';
  /** `CODE: message`, as the row's `last_error` keeps it. */
  readonly reason: string;
  readonly final: boolean;
}

/**
 * Kafka (or the network) is in trouble and the batch is sent again as a whole, or the broker
 * refused the records, which the relay then pins down and sets aside without holding back the
 * others.
 */
export type RecordErrorKind = { readonly kind: 'outage' } | RefusedRecords;

/**
 * Classifies a broker's error for the records of a produce request, by Kafka's error name and
 * whether the client would try again. Anything that is not a refusal of the records (a cluster
 * in transition, the producer's own state, a code nobody knows yet) is an outage.
 */
export function classifyRecordError(
  code: string,
  message: string,
  retriable: boolean,
): RecordErrorKind {
  const reason = `${code}: ${message}`;
  if (FINAL_REFUSALS.has(code)) return { kind: 'refused', reason, final: true };
  if (COUNTED_RETRIABLE.has(code)) return { kind: 'refused', reason, final: false };
  // A code the client gives up on is about the records, unless it is an outage.
  if (!retriable && !OUTAGES.has(code)) return { kind: 'refused', reason, final: false };
  return { kind: 'outage' };
}
