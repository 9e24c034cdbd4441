import { OutboxError } from '../../errors.ts';

/**
 * Rejects with SEND_TIMEOUT after `ms` when Kafka has not acknowledged: neither client bounds a
 * whole send (with its retries) by one deadline of its own. The caller's locks are released by
 * the rollback that follows.
 */
export async function withSendTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new OutboxError('SEND_TIMEOUT', `Kafka did not acknowledge within ${ms} ms`)),
      ms,
    );
  });
  // The abandoned send may still fail later; that outcome no longer matters.
  promise.catch(() => undefined);
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
