import kafkajs from 'kafkajs';
import { classifyRecordError, type RefusedRecords } from '../shared/record-refusals.ts';

// kafkajs is CommonJS: Node's ESM loader does not see its error classes as named exports (a
// bundler or vitest would, so only a plain `node` process shows it).
const { KafkaJSMetadataNotLoaded } = kafkajs;

/**
 * What a failed send says about its records (see RecordErrorKind); a refusal also carries the
 * code it was refused with: Kafka's error type (MESSAGE_TOO_LARGE, ...) or the kafkajs error
 * name.
 */
export type SendErrorKind =
  { readonly kind: 'outage' } | (RefusedRecords & { readonly code: string });

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
      const retriable = 'retriable' in current ? current.retriable : undefined;
      const kind = classifyRecordError(type, current.message, retriable !== false);
      return kind.kind === 'refused' ? { ...kind, code: type } : kind;
    }
    if (current instanceof KafkaJSMetadataNotLoaded) {
      const reason = `${current.name}: ${current.message}`;
      return { kind: 'refused', code: current.name, reason, final: false };
    }
    current = current.cause;
  }
  return { kind: 'outage' };
}
