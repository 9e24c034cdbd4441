/**
 * Kafka's error names that refuse the records of a produce request themselves, shared by every
 * adapter so the relay sees the same outcomes on either client.
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
