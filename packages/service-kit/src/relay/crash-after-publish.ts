import type { Logger } from 'pino';

/**
 * Fault injection for the resilience suite: after Kafka acknowledged a batch and before
 * `published_at` commits, SIGKILL this process with the given probability, so the batch is
 * published again on restart (a real duplicate). 0 (the default) never fires.
 */
export function crashAfterPublishHook(
  probability: number,
  logger: Logger,
): { afterPublish?: () => void } {
  if (probability <= 0) return {};
  return {
    afterPublish: () => {
      if (Math.random() >= probability) return;
      logger.warn('fault injection: SIGKILL after publish, before marking the batch published');
      process.kill(process.pid, 'SIGKILL');
    },
  };
}
