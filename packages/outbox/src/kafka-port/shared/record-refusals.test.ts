import { ProtocolError } from '@platformatic/kafka';
import { expect, it } from 'vitest';
import { classifyRecordError, COUNTED_RETRIABLE, FINAL_REFUSALS } from './record-refusals.ts';

/** A partition's error as @platformatic/kafka builds it from the broker's code, then classified. */
const classify = (code: number | string) => {
  const error = new ProtocolError(code);
  return classifyRecordError(error.apiId as string, error.message, error.canRetry as boolean);
};

it('tells refusals of records from outages, from the errors the client builds out of codes', () => {
  expect(classify(10)).toMatchObject({ kind: 'refused', final: true }); // MESSAGE_TOO_LARGE
  expect(classify('INVALID_RECORD')).toMatchObject({
    kind: 'refused',
    final: true,
    reason: expect.stringContaining('INVALID_RECORD'),
  });
  // Retriable for Kafka, yet possibly lasting: counted against the row.
  expect(classify('UNKNOWN_TOPIC_OR_PARTITION')).toMatchObject({ kind: 'refused', final: false });
  // Anything else the broker refuses for good is counted, not final.
  expect(classify('POLICY_VIOLATION')).toMatchObject({ kind: 'refused', final: false });
  expect(classify('TOPIC_AUTHORIZATION_FAILED')).toMatchObject({ kind: 'refused', final: false });

  // Kafka or the producer in trouble: resent later, nobody blamed, even where the client
  // marks the code as not retriable.
  for (const outage of [
    'NOT_LEADER_OR_FOLLOWER',
    'NOT_ENOUGH_REPLICAS',
    'REQUEST_TIMED_OUT',
    'OUT_OF_ORDER_SEQUENCE_NUMBER',
    'INVALID_PRODUCER_EPOCH',
    'BROKER_NOT_AVAILABLE',
    'CLUSTER_AUTHORIZATION_FAILED',
  ]) {
    expect(classify(outage), outage).toEqual({ kind: 'outage' });
  }
  // A code this client does not know (a newer broker) is no reason to blame a record.
  expect(classifyRecordError('KAFKA_ERROR_9999', '', true)).toEqual({ kind: 'outage' });
});

it('names only errors Kafka has: a misspelt refusal would quietly count as an outage', () => {
  for (const name of [...FINAL_REFUSALS, ...COUNTED_RETRIABLE]) {
    expect(new ProtocolError(name).apiId, name).toBe(name);
  }
});
