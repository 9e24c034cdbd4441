/**
 * Waits for Ctrl-C (SIGINT) or SIGTERM, keeping the process alive until then, for a program
 * that stays in the foreground (`pnpm dev`, `pnpm stack up`) and then stops what it started.
 *
 * Its listeners stay for the rest of the process: under `./pnpm <script>` one Ctrl-C arrives
 * twice, once from the terminal (to the whole foreground process group) and once forwarded by
 * pnpm. (Those scripts `exec node …`: a shell left between pnpm and node would die of the
 * first SIGINT while node is still stopping, and pnpm would exit 130 with it.) With a one-shot listener the second SIGINT finds Node's default action and kills the
 * program halfway through its shutdown, and pnpm reports `ELIFECYCLE Command failed`. So a
 * repeat is ignored, and only a third signal (Ctrl-C pressed again) exits at once, with 130.
 */
export function untilStopSignal(
  options: { onRepeat?: (signal: NodeJS.Signals, count: number) => void } = {},
): Promise<NodeJS.Signals> {
  // Signal listeners alone do not keep Node's event loop alive; this timer does, until a signal.
  const keepAlive = setInterval(() => undefined, 60_000);
  let count = 0;
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      count += 1;
      if (count === 1) {
        clearInterval(keepAlive);
        resolve(signal);
        return;
      }
      options.onRepeat?.(signal, count);
      if (count >= 3) {
        console.error(`${signal} again: exiting without finishing the shutdown`);
        process.exit(130);
      }
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
