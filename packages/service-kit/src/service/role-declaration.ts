import type { KafkaClient } from '@outbox-inbox/outbox';
import type { OutboxMetrics, OutboxWorkerKind } from '@outbox-inbox/outbox/ops';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ServiceConfig } from '../config/service-config.ts';
import type { Stoppable } from '../roles/roles.ts';
import type { ServiceHooks } from './service-hooks.ts';

/** What a service's roles share inside one process. */
export interface ServiceContext<DB> {
  readonly db: Kysely<DB>;
  /** Undefined when no role of this process needs Kafka. */
  readonly kafka: KafkaClient | undefined;
  /** Served at /metrics by the api (or ops) server. */
  readonly registry: Registry;
  /** The workers report stalls to `metrics.stalls`; give it to the api's health route. */
  readonly metrics: OutboxMetrics;
}

export interface RunningService extends Stoppable {
  /** Where the api (or, without it, the health + metrics server) listens, e.g. http://127.0.0.1:3001. */
  readonly url: string | undefined;
}

export interface StartServiceOptions<Role extends string, Config extends ServiceConfig> {
  readonly config: Config;
  readonly roles: readonly Role[];
  readonly logger: Logger;
  /** Library hooks for its workers; none in production (see ServiceHooks). */
  readonly hooks?: ServiceHooks | undefined;
}

/** What a role is handed when its process starts it. */
export interface RoleContext<DB, Config extends ServiceConfig> extends Omit<
  ServiceContext<DB>,
  'kafka'
> {
  readonly config: Config;
  /** The service's logger with the role's name on every line. */
  readonly logger: Logger;
  /** A test harness's hooks (see ServiceHooks); undefined in a deployment. */
  readonly hooks: ServiceHooks | undefined;
}

/** The context of a role that talks to Kafka: the process's one client comes with it. */
export interface KafkaRoleContext<DB, Config extends ServiceConfig> extends RoleContext<
  DB,
  Config
> {
  readonly kafka: KafkaClient;
}

/** One privilege on one of the service's own tables (see {@link RoleAccess}). */
export interface TableGrant {
  readonly table: string;
  readonly privilege: 'SELECT' | 'INSERT' | 'UPDATE' | 'DELETE';
  /** Only these columns; the whole table when absent. */
  readonly columns?: readonly string[];
}

/**
 * What the role's PostgreSQL login may do, and nothing more: the outbox library's tables by the
 * library's workers it runs (`grantOutboxAccess`), the service's own tables grant by grant. The
 * migrate step gives each role's login (`<componentPrefix>-<role>`) exactly this, so the
 * declarations are the one place that says who may do what.
 */
export interface RoleAccess {
  /** The library's workers the role runs; the gauges every role process serves come with any. */
  readonly outbox: readonly OutboxWorkerKind[];
  readonly tables?: readonly TableGrant[];
}

export interface RoleBasics {
  /** Where it listens on a developer's machine: the api's PORT, any other role's OPS_PORT. */
  readonly port: number;
  /** One line on what it does, for the tables that list the roles. */
  readonly summary: string;
  /** What its database login may do (see RoleAccess). */
  readonly access: RoleAccess;
}

/** The HTTP api: started after every worker and stopped before them, so requests drain first. */
export interface ApiRoleDeclaration<DB, Config extends ServiceConfig> extends RoleBasics {
  readonly kind: 'api';
  readonly app: (context: RoleContext<DB, Config>) => FastifyInstance;
}

/** A background worker that needs the database only. */
export interface WorkerRoleDeclaration<DB, Config extends ServiceConfig> extends RoleBasics {
  readonly kind: 'worker';
  readonly start: (context: RoleContext<DB, Config>) => Promise<Stoppable>;
}

/** A background worker that talks to Kafka: a process running it opens a Kafka client. */
export interface KafkaWorkerRoleDeclaration<DB, Config extends ServiceConfig> extends RoleBasics {
  readonly kind: 'kafka-worker';
  readonly start: (context: KafkaRoleContext<DB, Config>) => Promise<Stoppable>;
}

export type RoleDeclaration<DB, Config extends ServiceConfig> =
  | ApiRoleDeclaration<DB, Config>
  | WorkerRoleDeclaration<DB, Config>
  | KafkaWorkerRoleDeclaration<DB, Config>;

/**
 * A service's roles by name, in the order its workers start (the api, wherever it stands,
 * starts last). Everything that runs, deploys, scrapes or lists the roles reads this.
 */
export type RoleDeclarations<Role extends string, DB, Config extends ServiceConfig> = Readonly<
  Record<Role, RoleDeclaration<DB, Config>>
>;
