import { COUNTED_RETRIABLE, FINAL_REFUSALS } from '../record-refusals.ts';

/**
 * What a Kafka error code says about the records it refused, for @platformatic/kafka, whose
 * ProtocolError carries Kafka's own error name (`apiId`). The record refusals are shared with
 * the kafkajs adapter (../record-refusals.ts) so the relay sees the same outcomes on either
 * client.
 */
export type PartitionErrorKind =
  | { readonly kind: 'outage' }
  | { readonly kind: 'refused'; readonly reason: string; readonly final: boolean };

/**
 * Classifies the error a broker gave one partition of a produce request. Anything that is not
 * a refusal of the records (a cluster in transition, the producer's own state, an unknown code)
 * is an outage: the batch is sent again as a whole later.
 */
export function classifyPartitionError(
  apiId: string,
  message: string,
  canRetry: boolean,
): PartitionErrorKind {
  const reason = `${apiId}: ${message}`;
  if (FINAL_REFUSALS.has(apiId)) return { kind: 'refused', reason, final: true };
  if (COUNTED_RETRIABLE.has(apiId)) return { kind: 'refused', reason, final: false };
  // Non-retriable codes that are about the records (INVALID_REQUIRED_ACKS and the producer's
  // state are not: they are outages, as in the kafkajs adapter).
  if (!canRetry && !PRODUCER_OR_CLUSTER.has(apiId))
    return { kind: 'refused', reason, final: false };
  return { kind: 'outage' };
}

/** Non-retriable codes about the producer or the cluster, not about the records. */
const PRODUCER_OR_CLUSTER = new Set([
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'DUPLICATE_SEQUENCE_NUMBER',
  'INVALID_PRODUCER_EPOCH',
  'UNKNOWN_PRODUCER_ID',
  'INVALID_PRODUCER_ID_MAPPING',
  'CLUSTER_AUTHORIZATION_FAILED',
  'INVALID_REQUIRED_ACKS',
  'UNSUPPORTED_VERSION',
  'NOT_ENOUGH_REPLICAS',
  'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
  'NOT_LEADER_OR_FOLLOWER',
  'LEADER_NOT_AVAILABLE',
  'FENCED_LEADER_EPOCH',
  'UNKNOWN_LEADER_EPOCH',
  'REQUEST_TIMED_OUT',
  'NETWORK_EXCEPTION',
  'BROKER_NOT_AVAILABLE',
  'REPLICA_NOT_AVAILABLE',
  'KAFKA_STORAGE_ERROR',
  'COORDINATOR_LOAD_IN_PROGRESS',
  'COORDINATOR_NOT_AVAILABLE',
  'NOT_COORDINATOR',
  'NOT_CONTROLLER',
]);
