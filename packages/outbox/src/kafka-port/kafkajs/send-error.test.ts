import {
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSTopicMetadataNotLoaded,
} from 'kafkajs';
import { expect, it } from 'vitest';
import { OutboxError } from '../../errors.ts';
import { classifySendError } from './send-error.ts';

/** A broker error as kafkajs builds it from an error code (protocol/error.js). */
const protocolError = (type: string, retriable: boolean) =>
  new KafkaJSProtocolError(
    Object.assign(new Error(`${type} from the broker`), { type, retriable }),
  );

it('tells refusals of records from outages, through the wrappers kafkajs puts around them', () => {
  // bail() rejects with the protocol error itself; a thrown non-retriable one is wrapped
  // (its cause set as kafkajs's retrier does: the typings leave the option out).
  expect(classifySendError(protocolError('MESSAGE_TOO_LARGE', false))).toMatchObject({
    kind: 'refused',
    code: 'MESSAGE_TOO_LARGE',
    final: true,
  });
  const wrapped = protocolError('INVALID_TOPIC_EXCEPTION', false);
  const nonRetriable = Object.assign(new KafkaJSNonRetriableError(wrapped), { cause: wrapped });
  expect(classifySendError(nonRetriable)).toMatchObject({ kind: 'refused', final: true });
  // Retriable, but possibly lasting: counted against the row.
  const unknown = protocolError('UNKNOWN_TOPIC_OR_PARTITION', true);
  expect(
    classifySendError(
      new KafkaJSNumberOfRetriesExceeded(unknown, { retryCount: 2, retryTime: 100 }),
    ),
  ).toMatchObject({ kind: 'refused', code: 'UNKNOWN_TOPIC_OR_PARTITION', final: false });
  expect(
    classifySendError(
      new KafkaJSTopicMetadataNotLoaded('Producing to topic without metadata', { topic: 'x' }),
    ),
  ).toMatchObject({
    kind: 'refused',
    final: false,
  });
  // Anything else the broker refuses for good is counted, not final.
  expect(classifySendError(protocolError('POLICY_VIOLATION', false))).toMatchObject({
    kind: 'refused',
    final: false,
  });

  // Kafka or the producer in trouble: the batch is retried whole, nobody is blamed.
  for (const outage of [
    protocolError('NOT_LEADER_FOR_PARTITION', true),
    protocolError('OUT_OF_ORDER_SEQUENCE_NUMBER', false),
    new KafkaJSNumberOfRetriesExceeded(protocolError('NOT_ENOUGH_REPLICAS', true), {
      retryCount: 2,
      retryTime: 100,
    }),
    new KafkaJSConnectionError('Connection error: ECONNREFUSED'),
    // A cluster in transition, even where a wrapper flags it as lasting.
    protocolError('NOT_ENOUGH_REPLICAS', false),
    protocolError('NOT_ENOUGH_REPLICAS_AFTER_APPEND', false),
    protocolError('NOT_LEADER_FOR_PARTITION', false),
    protocolError('GROUP_LOAD_IN_PROGRESS', false),
    protocolError('REQUEST_TIMED_OUT', false),
    new OutboxError('SEND_TIMEOUT', 'Kafka did not acknowledge within 10 ms'),
    'not even an error',
  ]) {
    expect(classifySendError(outage)).toEqual({ kind: 'outage' });
  }
});
