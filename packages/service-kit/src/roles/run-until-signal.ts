import type { Logger } from 'pino';
import { ConfigError } from '../config/env-reader.ts';
import type { Stoppable } from './roles.ts';

/**
 * The body of a service's `main.ts`: starts it, and on SIGTERM or SIGINT stops it gracefully
 * (stop accepting, finish in-flight work, close connections) and exits 0. A second signal, or a
 * stop that takes longer than `graceMs`, exits at once. Bad configuration exits 1 with its message.
 */
export async function runUntilSignal(
  start: () => Promise<Stoppable>,
  options: {
    /** Read after `start`: the logger is usually built from the configuration it parses. */
    logger: () => Logger | undefined;
    graceMs?: number;
  },
): Promise<void> {
  let running: Stoppable;
  try {
    running = await start();
  } catch (error) {
    const logger = options.logger();
    if (error instanceof ConfigError) {
      console.error(`error: ${error.message}`);
    } else {
      logger?.fatal({ err: error }, 'start-up failed');
      if (!logger) console.error(error);
    }
    process.exit(1);
  }
  const logger = options.logger();
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  logger?.info({ signal }, 'shutting down');
  const force = (): never => {
    logger?.error('shutdown did not finish in time; exiting');
    process.exit(1);
  };
  process.once('SIGTERM', force);
  process.once('SIGINT', force);
  setTimeout(force, options.graceMs ?? 15_000).unref();
  try {
    await running.stop();
    logger?.info('stopped');
    process.exit(0);
  } catch (error) {
    logger?.error({ err: error }, 'shutdown failed');
    process.exit(1);
  }
}
