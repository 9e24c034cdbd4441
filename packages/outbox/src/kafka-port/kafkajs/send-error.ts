import kafkajs from 'kafkajs';
import { COUNTED_RETRIABLE, FINAL_REFUSALS } from '../record-refusals.ts';

// kafkajs is CommonJS: Node's ESM loader does not see its error classes as named exports (a
// bundler or vitest would, so only a plain `node` process shows it).
const { KafkaJSMetadataNotLoaded } = kafkajs;

/**
 * What a failed send says about its records: Kafka (or the network) is in trouble and the
 * batch is tried again as a whole, or the broker refused records, which the relay then pins
 * down and sets aside without holding back the others.
 */
export type SendErrorKind =
  | { readonly kind: 'outage' }
  | {
      readonly kind: 'refused';
      /** Kafka's error type (MESSAGE_TOO_LARGE, ...) or the kafkajs error name. */
      readonly code: string;
      readonly reason: string;
      /** Cannot pass on a retry: the row is set aside at once. */
      readonly final: boolean;
    };

/**
 * A cluster in transition: a leader moved or died, the in-sync replicas are fewer than the
 * topic's `min.insync.replicas`, the controller quorum is lost. They pass when the cluster
 * heals, whatever kafkajs flags them, so they never count against a row: the batch waits.
 * NOT_ENOUGH_REPLICAS_AFTER_APPEND was written but not acknowledged: sent again, a duplicate.
 */
const CLUSTER_TRANSITIONS = new Set([
  'NOT_ENOUGH_REPLICAS',
  'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
  'NOT_LEADER_FOR_PARTITION',
  'LEADER_NOT_AVAILABLE',
  'FENCED_LEADER_EPOCH',
  'UNKNOWN_LEADER_EPOCH',
  'REQUEST_TIMED_OUT',
  'NETWORK_EXCEPTION',
  'BROKER_NOT_AVAILABLE',
  'REPLICA_NOT_AVAILABLE',
  'KAFKA_STORAGE_ERROR',
  // kafkajs's name for COORDINATOR_LOAD_IN_PROGRESS: a new idempotent producer gets it while
  // no controller quorum hands out producer ids.
  'GROUP_LOAD_IN_PROGRESS',
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'NOT_COORDINATOR_FOR_GROUP',
  'NOT_CONTROLLER',
]);

/** Non-retriable errors about the producer's own state, not about records: start afresh. */
const PRODUCER_STATE = new Set([
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'DUPLICATE_SEQUENCE_NUMBER',
  'INVALID_PRODUCER_EPOCH',
  'UNKNOWN_PRODUCER_ID',
  'INVALID_PRODUCER_ID_MAPPING',
  'CLUSTER_AUTHORIZATION_FAILED',
  'INVALID_REQUIRED_ACKS',
  'UNSUPPORTED_VERSION',
]);

/**
 * Classifies a `send`/`sendBatch` rejection. kafkajs wraps the broker's error
 * (KafkaJSNonRetriableError or KafkaJSNumberOfRetriesExceeded with the KafkaJSProtocolError as
 * `cause`), so the chain is searched for the protocol error's `type`. A producer whose
 * metadata lacks the topic (it does not exist and may not be created) fails with
 * KafkaJSMetadataNotLoaded or UNKNOWN_TOPIC_OR_PARTITION before anything is sent.
 */
export function classifySendError(error: unknown): SendErrorKind {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth += 1) {
    const type = 'type' in current ? current.type : undefined;
    if (typeof type === 'string') {
      const reason = `${type}: ${current.message}`;
      if (FINAL_REFUSALS.has(type)) return { kind: 'refused', code: type, reason, final: true };
      if (PRODUCER_STATE.has(type) || CLUSTER_TRANSITIONS.has(type)) return { kind: 'outage' };
      const retriable = 'retriable' in current ? current.retriable : undefined;
      if (COUNTED_RETRIABLE.has(type) || retriable === false) {
        return { kind: 'refused', code: type, reason, final: false };
      }
      return { kind: 'outage' };
    }
    if (current instanceof KafkaJSMetadataNotLoaded) {
      const reason = `${current.name}: ${current.message}`;
      return { kind: 'refused', code: current.name, reason, final: false };
    }
    current = current.cause;
  }
  return { kind: 'outage' };
}
