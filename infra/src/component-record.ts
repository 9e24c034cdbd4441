import type { ContainerSpec } from './docker/container-spec.ts';
import type { LaunchSpec } from './process/launch.ts';
import type { ProcessIdentity } from './process/process-identity.ts';
import type { Readiness } from './readiness.ts';

/** One-off command run before the first start, while the data folder is empty (initdb, Kafka format). */
export interface PrepareSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly uid?: number | undefined;
  readonly gid?: number | undefined;
}

/** What every component of a stack has, whatever runs it. */
interface RecordBase {
  readonly name: string;
  readonly readiness: Readiness;
  readonly readyTimeoutMs: number;
  /** Graceful stop: PostgreSQL's fast shutdown is SIGINT, the JVM and Node take SIGTERM. */
  readonly stopSignal: NodeJS.Signals;
  /** Connection details other code needs: `url` for PostgreSQL, `brokers` for Kafka, … */
  readonly endpoints: Readonly<Record<string, string>>;
  readonly ports: Readonly<Record<string, number>>;
  /** When `pause` froze it (SIGSTOP); cleared by `resume`, and by stop, kill and wipe. */
  readonly pausedAt?: string | undefined;
}

/** A supervised process of this machine (a service role). */
export interface ProcessRecord extends RecordBase {
  readonly kind: 'process';
  readonly launch: LaunchSpec;
  /** Set while it runs; cleared by stop and kill. */
  readonly process?: ProcessIdentity | undefined;
}

/** A server the local provider runs from its own data folder, prepared on the first start. */
interface LocalServerFields extends RecordBase {
  readonly launch: LaunchSpec;
  readonly prepare: PrepareSpec;
  readonly dataDir: string;
  /** Set while it runs; cleared by stop and kill. */
  readonly process?: ProcessIdentity | undefined;
}

export interface PostgresRecord extends LocalServerFields {
  readonly kind: 'postgres';
}

export interface KafkaRecord extends LocalServerFields {
  readonly kind: 'kafka';
}

/**
 * Kafka Connect, run by the local provider: no data folder to prepare, since its configs,
 * offsets and status live in Kafka topics (`dataDir` only holds its config and log).
 */
export interface ConnectRecord extends RecordBase {
  readonly kind: 'connect';
  readonly launch: LaunchSpec;
  readonly dataDir: string;
  /** Set while it runs; cleared by stop and kill. */
  readonly process?: ProcessIdentity | undefined;
}

/** A server in a container of the docker provider: how to create it, and its id once created. */
export interface ContainerRecord extends RecordBase {
  readonly kind: 'container';
  readonly container: ContainerSpec;
  readonly containerId?: string | undefined;
}

/** A server someone else runs: the stack only connects to it. */
export interface ExternalRecord extends RecordBase {
  readonly kind: 'external';
}

/** What runs on this machine as a local process, server or role. */
export type LocalRecord = ProcessRecord | PostgresRecord | KafkaRecord | ConnectRecord;

/** A component of a stack as its state file holds it; `kind` says which fields it has. */
export type ComponentRecord = LocalRecord | ContainerRecord | ExternalRecord;

/** The log file of a component this machine runs; containers and external servers have none here. */
export function logFileOf(record: ComponentRecord): string | undefined {
  return record.kind === 'container' || record.kind === 'external'
    ? undefined
    : record.launch.logFile;
}
