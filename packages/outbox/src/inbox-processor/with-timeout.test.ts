import { expect, it } from 'vitest';
import { withTimeout } from './with-timeout.ts';

it('past the deadline the outcome is the timeout, even when stopping the work makes it fail first', async () => {
  let stop: (error: Error) => void = () => undefined;
  const work = new Promise<void>((_resolve, reject) => {
    stop = reject;
  });
  const attempt = withTimeout(work, 10, async () => {
    // What cancelling a running query does: the work fails at once, before onTimeout returns.
    stop(new Error('canceling statement due to user request'));
    await new Promise((resolve) => setTimeout(resolve, 20));
  });
  await expect(attempt).rejects.toMatchObject({ code: 'HANDLER_TIMEOUT' });
});

it('work that settles in time wins, with its own result or error', async () => {
  await expect(withTimeout(Promise.resolve(7), 1000, async () => undefined)).resolves.toBe(7);
  await expect(
    withTimeout(Promise.reject(new Error('own failure')), 1000, async () => undefined),
  ).rejects.toThrow('own failure');
});
