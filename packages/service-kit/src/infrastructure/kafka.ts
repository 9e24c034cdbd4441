import { Kafka, logLevel, type LogEntry } from 'kafkajs';
import type { Logger } from 'pino';

// kafkajs levels → pino methods; kafkajs logs expected reconnects as errors, so those are warnings.
const methods = {
  [logLevel.ERROR]: 'warn',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
  [logLevel.NOTHING]: 'debug',
} as const;

/**
 * The one place a service builds its Kafka client (R-DIST-OBX-X1: producers exist only in
 * relay / infrastructure modules). kafkajs logs go to the service's pino logger.
 */
export function createKafka(options: {
  clientId: string;
  brokers: readonly string[];
  logger: Logger;
}): Kafka {
  const log = options.logger.child({ component: 'kafkajs' });
  return new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    connectionTimeout: 3000,
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, namespace, log: entry }: LogEntry) => {
        const { message, ...extra } = entry;
        log[methods[level]]({ namespace, ...extra }, message);
      },
  });
}
