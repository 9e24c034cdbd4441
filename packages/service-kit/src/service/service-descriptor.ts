import type { Logger } from 'pino';
import { describeEnv, type EnvVariable } from '../config/describe-env.ts';
import type { EnvReader } from '../config/env-reader.ts';
import type { ServiceConfig } from '../config/service-config.ts';
import type { TopicSpec } from '../infrastructure/topics/topic-spec.ts';
import type { RunningService } from '../roles/start-service-process.ts';
import type { ServiceHooks } from './service-hooks.ts';

export interface StartServiceOptions<Role extends string, Config extends ServiceConfig> {
  readonly config: Config;
  readonly roles: readonly Role[];
  readonly logger: Logger;
  /** Library hooks for its workers; none in production (see ServiceHooks). */
  readonly hooks?: ServiceHooks | undefined;
}

/**
 * A service, described once by its own package: what runs it (`pnpm dev`, the e2e suite, the
 * bench) reads this and names no file inside the service.
 */
export interface ServiceDescriptor<
  Role extends string = string,
  Config extends ServiceConfig = ServiceConfig,
> {
  /** `order-service`: its logger's name, and by default its Kafka client id and consumer group. */
  readonly name: string;
  /** A role's process is the component `<componentPrefix>-<role>`: order-api, order-relay. */
  readonly componentPrefix: string;
  /** The name of its database, where a launcher creates one. */
  readonly database: string;
  /** The package's folder: its programs run from here. */
  readonly directory: string;
  /**
   * Its programs, relative to `directory`: `main` runs the roles named by `--roles`, `migrate`
   * brings DATABASE_URL to the latest schema and exits.
   */
  readonly programs: { readonly main: string; readonly migrate: string };
  readonly roles: readonly Role[];
  /** The port of each role on a developer's machine: the api's PORT, the others' OPS_PORT. */
  readonly ports: Readonly<Record<Role, number>>;
  /** Every variable its configuration reads, with its default (taken from `readConfig`). */
  readonly env: readonly EnvVariable[];
  /** The topics it publishes to: its migrate program provisions them (packages/contracts). */
  readonly topics: readonly TopicSpec[];
  rolesNeedKafka(roles: readonly Role[]): boolean;
  /** Reads the configuration; Kafka settings are required only when `needsKafka`. */
  readConfig(read: EnvReader, options: { needsKafka: boolean }): Config;
  /** Starts the roles in this process; `stop()` drains and closes them in reverse. */
  start(options: StartServiceOptions<Role, Config>): Promise<RunningService>;
  migrate(options: { url: string; logger: Logger }): Promise<void>;
}

/** A frozen descriptor whose `env` is read off its `readConfig` (every role, so Kafka too). */
export function defineService<Role extends string, Config extends ServiceConfig>(
  service: Omit<ServiceDescriptor<Role, Config>, 'env'>,
): ServiceDescriptor<Role, Config> {
  const env = describeEnv((read) => service.readConfig(read, { needsKafka: true }));
  return Object.freeze({ ...service, env });
}
