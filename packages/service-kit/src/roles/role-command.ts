import path from 'node:path';
import type { ServiceDescriptor } from '../service/service-descriptor.ts';

/**
 * V8 flags for every role process. Under a high allocation rate (a relay draining a backlog)
 * Node 24's V8 grows the young generation far beyond what the live heap needs, and the process
 * holds that memory; small semi-spaces keep it resident near its live heap at the same drain
 * rate. The measurements are in docs/benchmarks.md (B6 and its analysis).
 */
export const ROLE_NODE_FLAGS: readonly string[] = Object.freeze(['--max-semi-space-size=8']);

/** How to start a program: what a process supervisor needs. */
export interface Command {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** Variables the program needs besides the service's own configuration. */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * `node <role flags> <program> --roles <role>` in the service's folder. The program is the
 * service's main unless a harness runs the service from an entry point of its own (given with
 * its leading arguments), which must start the roles the way main does.
 */
export function roleCommand(
  service: ServiceDescriptor,
  role: string,
  program: readonly string[] = [service.programs.main],
): Command {
  return {
    command: process.execPath,
    args: [...ROLE_NODE_FLAGS, ...program, '--roles', role],
    cwd: service.directory,
    env: {},
  };
}

/**
 * `node <migrate>`: brings the database to the service's latest schema and, given the brokers,
 * provisions the topics it publishes to; then exits.
 */
export function migrateCommand(
  service: ServiceDescriptor,
  databaseUrl: string,
  kafkaBrokers: readonly string[] = [],
): Command {
  const env: Record<string, string> = { DATABASE_URL: databaseUrl };
  if (kafkaBrokers.length > 0) env.KAFKA_BROKERS = kafkaBrokers.join(',');
  return {
    command: process.execPath,
    args: [path.join(service.directory, service.programs.migrate)],
    cwd: service.directory,
    env,
  };
}
