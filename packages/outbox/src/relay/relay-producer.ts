import { Partitioners, type ICustomPartitioner, type Kafka, type Producer } from 'kafkajs';
import type { RelayOptions } from './relay-options.ts';

/**
 * The relay's producer: idempotent, acks -1, one request in flight (per-partition order).
 * Keep it after Kafka refused some records: its sequence numbers are what lets a resend of
 * the records Kafka did append be recognised as a duplicate (see send-events.ts). A new
 * producer starts new sequences, and the broker takes the same records again.
 */
export function createRelayProducer(
  kafka: Kafka,
  options: Pick<RelayOptions, 'allowAutoTopicCreation'> = { allowAutoTopicCreation: true },
): Producer {
  return kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: pinningPartitioner,
    allowAutoTopicCreation: options.allowAutoTopicCreation,
    // kafkajs keeps 5 retries with long waits by default; the relay retries in its own loop.
    retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 },
  });
}

/**
 * Kafka's default (murmur2) partitioner that also writes the partition it chose into the
 * message. A resend of the same message objects then goes to the same partitions in the same
 * groups, and the relay can tell which partition each refused message was in.
 */
const pinningPartitioner: ICustomPartitioner = () => {
  const place = Partitioners.DefaultPartitioner();
  return (args) => {
    const partition = place(args);
    args.message.partition = partition;
    return partition;
  };
};
