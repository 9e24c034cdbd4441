import { pino, type Logger } from 'pino';

/** JSON logs on stdout, one logger per process; the service name is on every line. */
export function createLogger(options: { service: string; level: string }): Logger {
  return pino({ name: options.service, level: options.level });
}
