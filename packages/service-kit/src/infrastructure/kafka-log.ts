import net from 'node:net';
import { logLevel, type ISocketFactory, type LogEntry, type logCreator } from 'kafkajs';
import type { Logger } from 'pino';

// kafkajs levels → pino methods; kafkajs logs expected reconnects as errors, so those are warnings.
const methods = {
  [logLevel.ERROR]: 'warn',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
  [logLevel.NOTHING]: 'debug',
} as const;

/** What kafkajs says, in its message or error, when a broker cannot be reached. */
const unreachable =
  /ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|EPIPE|Connection (error|timeout)|Closed connection|KafkaJSConnection/;
/** A retry notice that follows a connection failure without naming it. */
const retryNotice = /^Restarting the consumer/;
/** `host:port` in a message like `Connection error: connect ECONNREFUSED 127.0.0.1:9092`. */
const brokerInText = /connect \w+ (\S+:\d+)/;

/**
 * kafkajs warns about this whenever an idempotent producer gets a finite `retries`. The relay
 * producer (packages/outbox/src/kafka-port/kafkajs/kafkajs-producer.ts) limits them on purpose: the relay
 * retries in its own loop with the same producer, and kafkajs rolls that producer's sequence
 * numbers back on a failed send, so a resend is recognised by the broker as a duplicate
 * (packages/outbox/src/relay/send-events.ts). The guarantee the warning is about holds.
 */
const limitedRetriesWarning =
  'Limiting retries for the idempotent producer may invalidate EoS guarantees';

interface Outage {
  readonly since: number;
  failedAttempts: number;
}

/** What `createKafka` hands kafkajs: where its logs go, and how it opens broker connections. */
export interface KafkaLog {
  readonly logCreator: logCreator;
  readonly socketFactory: ISocketFactory;
}

/**
 * kafkajs logs every failed connection attempt and every retry it schedules: an outage of a
 * minute is dozens of lines. This keeps one warning when a broker stops answering and one info
 * line when a connection to it opens again, with the number of failed attempts in between; the
 * attempts themselves go to debug. Everything else kafkajs says is logged as it comes.
 */
export function quietKafkaLog(logger: Logger, now: () => number = Date.now): KafkaLog {
  const log = logger.child({ component: 'kafkajs' });
  const outages = trackOutages(log, now);

  const logCreator: logCreator =
    () =>
    ({ level, namespace, log: entry }: LogEntry) => {
      const { message, ...extra } = entry;
      if (message === limitedRetriesWarning) return;
      const fields = { namespace, ...extra };
      const text = `${message} ${typeof extra['error'] === 'string' ? extra['error'] : ''}`;
      const isFailure = level <= logLevel.WARN;
      if (isFailure && unreachable.test(text)) {
        const broker =
          typeof extra['broker'] === 'string' ? extra['broker'] : brokerInText.exec(text)?.[1];
        outages.failed(broker, fields, message);
        return;
      }
      if (isFailure && outages.open() && retryNotice.test(message)) {
        outages.failed(undefined, fields, message);
        return;
      }
      log[methods[level]](fields, message);
    };

  // kafkajs's own factory, plus the moment a connection opens. The services connect without
  // TLS (createKafka takes no ssl option).
  const socketFactory: ISocketFactory = ({ host, port, onConnect }) => {
    const socket = net.connect({ host, port }, () => {
      outages.connected(`${host}:${port}`);
      onConnect();
    });
    socket.setKeepAlive(true, 60_000);
    return socket;
  };

  return { logCreator, socketFactory };
}

/** The brokers kafkajs cannot reach at the moment, fed by its log and its connections. */
interface Outages {
  /** A failed attempt to reach `broker`, or (undefined) a retry notice that names none. */
  failed(broker: string | undefined, fields: object, message: string): void;
  /** A connection to `broker` opened. */
  connected(broker: string): void;
  /** Some outage is open. */
  open(): boolean;
}

/**
 * Logs one warning when a broker stops answering, each further failed attempt at debug, and one
 * info line, with the attempts and the outage's length, when a connection to it opens again.
 */
function trackOutages(log: Logger, now: () => number): Outages {
  const outages = new Map<string, Outage>();

  const failed = (broker: string | undefined, fields: object, message: string): void => {
    // A failure that names no broker (a retry notice) belongs to the outage already open.
    const key = broker ?? outages.keys().next().value ?? 'kafka';
    const outage = outages.get(key);
    if (outage) {
      outage.failedAttempts += 1;
      log.debug(fields, message);
      return;
    }
    outages.set(key, { since: now(), failedAttempts: 1 });
    log.warn(
      { broker: key, error: message },
      'Kafka broker unreachable; retrying (each attempt at debug level, one line when it answers)',
    );
  };

  const connected = (broker: string): void => {
    // A connection to any broker ends an outage whose broker was never named.
    for (const key of [broker, 'kafka']) {
      const outage = outages.get(key);
      if (!outage) continue;
      outages.delete(key);
      log.info(
        { broker: key, failedAttempts: outage.failedAttempts, outageMs: now() - outage.since },
        'Kafka broker reachable again',
      );
    }
  };

  return { failed, connected, open: () => outages.size > 0 };
}
