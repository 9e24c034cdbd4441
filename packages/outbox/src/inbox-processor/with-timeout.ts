import { OutboxError } from '../errors.ts';

/**
 * Resolves or rejects like `work`, or rejects with HANDLER_TIMEOUT after `timeoutMs`, once
 * `onTimeout` (which stops what it can of the work) has run. Past the deadline the outcome is
 * the timeout even when the work fails first: stopping it (a cancelled query) makes it fail
 * with an error of its own, which would hide why. A later rejection of the abandoned work is
 * swallowed, not left unhandled.
 */
export async function withTimeout<T>(
  work: Promise<T>,
  timeoutMs: number,
  onTimeout: () => Promise<void>,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let expired = false;
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      expired = true;
      const fail = (): void =>
        reject(new OutboxError('HANDLER_TIMEOUT', `inbox handler timed out after ${timeoutMs} ms`));
      onTimeout().then(fail, fail);
    }, timeoutMs);
  });
  timedOut.catch(() => undefined);
  try {
    return await Promise.race([work, timedOut]);
  } catch (error) {
    if (expired) return await timedOut;
    throw error;
  } finally {
    clearTimeout(timer);
    work.catch(() => undefined);
  }
}
