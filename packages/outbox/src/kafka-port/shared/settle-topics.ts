import type { TopicDescription } from '../kafka-client.ts';

/** How long a step about a topic just created waits for the cluster to know it. */
const SETTLE_MS = 30_000;

/**
 * Runs a step about topics that may have just been created. On a cluster each broker applies a
 * creation on its own, and the client may ask one that has not yet: retried until a deadline
 * while `notAppliedYet` (each client words it its own way) says that is the error.
 */
export async function onceApplied<T>(
  step: () => Promise<T>,
  notAppliedYet: (error: unknown) => boolean,
): Promise<T> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    try {
      return await step();
    } catch (error) {
      if (!notAppliedYet(error) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Every partition of the topics has a leader, as the cluster tells. */
export async function waitForLeaders(
  describe: (topics: readonly string[]) => Promise<TopicDescription[]>,
  names: readonly string[],
): Promise<void> {
  const deadline = Date.now() + SETTLE_MS;
  while (Date.now() < deadline) {
    const topics = await describe(names);
    const led = topics.every(
      (topic) =>
        topic.partitions.length > 0 && topic.partitions.every((partition) => partition.leader >= 0),
    );
    if (led) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the new topics ${names.join(', ')} have no leaders after ${SETTLE_MS / 1000} s`);
}
