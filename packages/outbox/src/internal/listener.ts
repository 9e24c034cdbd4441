import pg from 'pg';
import type { Logger } from '../logger.ts';
import { backoffDelay, type BackoffOptions } from './backoff.ts';
import { Wakeup } from './wakeup.ts';

/** Connection settings of the dedicated LISTEN connection (a `pg.Client`). */
export type ListenConfig = pg.ClientConfig;

export interface ListenerDeps {
  readonly config: pg.ClientConfig;
  readonly channel: string;
  readonly logger: Logger;
  readonly backoff: BackoffOptions;
  /** Called per notification, and after every (re)connect: notifications may have been missed. */
  readonly onNotify: () => void;
  /** Called per notification received, only: what shows the LISTEN really hears. */
  readonly onHeard?: (() => void) | undefined;
}

/**
 * LISTEN on a dedicated connection that reconnects (with backoff) after PostgreSQL restarts.
 * Polling stays the safety net; this only makes wake-ups immediate.
 */
export function startListener(deps: ListenerDeps): { stop(): Promise<void> } {
  let running = true;
  let client: pg.Client | undefined;
  const retry = new Wakeup();
  let lost: Wakeup | undefined;

  const loop = async (): Promise<void> => {
    let attempt = 0;
    while (running) {
      const gone = new Wakeup();
      lost = gone;
      const connection = listeningClient(deps, gone);
      try {
        await connection.connect();
        client = connection;
        await connection.query(`LISTEN ${pg.escapeIdentifier(deps.channel)}`);
        if (attempt > 0) deps.logger.info({ channel: deps.channel }, 'LISTEN connection restored');
        attempt = 0;
        deps.onNotify();
        await gone.wait(2 ** 31 - 1);
        if (running) {
          deps.logger.warn(
            { channel: deps.channel },
            'LISTEN connection lost; polling until it is back',
          );
        }
      } catch (error) {
        if (attempt === 0 && running) {
          deps.logger.warn(
            { channel: deps.channel, err: error },
            'LISTEN connection failed; polling until it is back',
          );
        }
      }
      client = undefined;
      connection.end().catch(() => undefined);
      if (!running) break;
      attempt += 1;
      await retry.wait(backoffDelay(deps.backoff, attempt));
    }
  };
  const done = loop();

  return {
    async stop() {
      running = false;
      retry.wake();
      lost?.wake();
      await client?.end().catch(() => undefined);
      await done;
    },
  };
}

/** What a worker's LISTEN takes from the worker's deps. */
export interface WorkerListenDeps {
  /** The dedicated connection; without it the worker only polls. */
  readonly listen?: pg.ClientConfig | undefined;
  readonly logger: Logger;
  /** `OutboxMetrics` fits: the listener counts what it hears by channel. */
  readonly metrics?:
    { readonly notificationsHeardTotal: { inc(labels: { channel: string }): void } } | undefined;
}

/**
 * A worker's LISTEN on `channel` when its options ask for one (`notify`) and its deps give it a
 * connection; undefined otherwise, and the worker only polls. Each notification heard counts in
 * the `notificationsHeardTotal` metric.
 */
export function listenWhenAsked(
  deps: WorkerListenDeps,
  options: { readonly notify: boolean; readonly backoff: BackoffOptions },
  channel: string,
  onNotify: () => void,
): { stop(): Promise<void> } | undefined {
  if (!options.notify || !deps.listen) return undefined;
  const { logger, metrics } = deps;
  return startListener({
    config: deps.listen,
    channel,
    logger,
    backoff: options.backoff,
    onNotify,
    onHeard: () => metrics?.notificationsHeardTotal.inc({ channel }),
  });
}

/** A client that hands on the channel's notifications and wakes `gone` when it drops. */
function listeningClient(deps: ListenerDeps, gone: Wakeup): pg.Client {
  const connection = new pg.Client({ keepAlive: true, ...deps.config });
  // Without an 'error' listener a dropped connection would crash the process.
  connection.on('error', () => gone.wake());
  connection.on('end', () => gone.wake());
  connection.on('notification', (message) => {
    if (message.channel !== deps.channel) return;
    deps.onHeard?.();
    deps.onNotify();
  });
  return connection;
}
