import type { Consumer } from 'kafkajs';
import type { Logger } from '../logger.ts';

/**
 * Commits "next offset to read" for one partition. A failure (Kafka going away) is logged and
 * swallowed: the rows are already durable, a later commit covers this one, and at worst the
 * batch is delivered again and dropped as duplicates.
 */
export async function commitOffset(
  consumer: Consumer,
  logger: Logger,
  target: { topic: string; partition: number; lastOffset: string },
): Promise<void> {
  const offset = (BigInt(target.lastOffset) + 1n).toString();
  try {
    await consumer.commitOffsets([{ topic: target.topic, partition: target.partition, offset }]);
  } catch (error) {
    logger.warn(
      { topic: target.topic, partition: target.partition, offset, err: error },
      'offset commit failed; the batch may be delivered again (duplicates are dropped)',
    );
  }
}
