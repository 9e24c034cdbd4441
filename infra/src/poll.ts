/**
 * Polls `probe` until it returns a value other than undefined/false, or the deadline passes.
 * The one way this repo waits for anything: no fixed sleeps.
 */
export async function pollUntil<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  options: { timeoutMs: number; intervalMs?: number; description: string },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  const intervalMs = options.intervalMs ?? 100;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const reason = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(
        `timed out after ${options.timeoutMs} ms waiting for ${options.description}${reason}`,
        {
          cause: lastError,
        },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
