import type { OutboxTables } from '@outbox-inbox/outbox';
import type { Logger } from 'pino';
import { describeEnv, type EnvVariable } from '../config/describe-env.ts';
import type { EnvReader } from '../config/env-reader.ts';
import type { ServiceConfig } from '../config/service-config.ts';
import type { TopicSpec } from '../infrastructure/topics/topic-spec.ts';
import { grantRoleLogins } from '../database/role-logins.ts';
import { withOneConnection } from '../database/with-one-connection.ts';
import { startServiceRoles } from '../roles/start-service-roles.ts';
import type {
  RoleDeclaration,
  RoleDeclarations,
  RunningService,
  StartServiceOptions,
} from './role-declaration.ts';

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
  /** Its roles, in the order they are declared (see RoleDeclarations). */
  readonly roles: readonly Role[];
  /** The port of each role on a developer's machine: the api's PORT, the others' OPS_PORT. */
  readonly ports: Readonly<Record<Role, number>>;
  /** One line per role on what it does. */
  readonly summaries: Readonly<Record<Role, string>>;
  /**
   * Each role's PostgreSQL login, `<componentPrefix>-<role>` (the process's name too): `migrate`
   * creates it and grants it what the role declares it needs (RoleAccess), nothing more.
   */
  readonly logins: Readonly<Record<Role, string>>;
  /** Every variable its configuration reads, with its default (taken from `readConfig`). */
  readonly env: readonly EnvVariable[];
  /** The topics it publishes to: its migrate program provisions them (packages/contracts). */
  readonly topics: readonly TopicSpec[];
  rolesNeedKafka(roles: readonly Role[]): boolean;
  /** Reads the configuration; Kafka settings are required only when `needsKafka`. */
  readConfig(read: EnvReader, options: { needsKafka: boolean }): Config;
  /** Starts the roles in this process; `stop()` drains and closes them in reverse. */
  start(options: StartServiceOptions<Role, Config>): Promise<RunningService>;
  /** Brings the database to the latest schema, then grants each role's login its access. */
  migrate(options: { url: string; logger: Logger }): Promise<void>;
}

/** What a service writes to describe itself; `defineService` derives the rest. */
export interface ServiceDeclaration<
  Role extends string,
  DB extends OutboxTables,
  Config extends ServiceConfig,
> extends Omit<
  ServiceDescriptor<Role, Config>,
  'env' | 'roles' | 'ports' | 'summaries' | 'logins' | 'rolesNeedKafka' | 'start' | 'programs'
> {
  /** `src/main.ts` and `src/migrate.ts` unless it says otherwise. */
  readonly programs?: ServiceDescriptor['programs'];
  /** Each role once: its port, what it does, whether it talks to Kafka, how it starts. */
  readonly roles: RoleDeclarations<Role, DB, Config>;
  /** The schema's migrations alone; the descriptor's `migrate` adds the logins' grants. */
  readonly migrate: ServiceDescriptor['migrate'];
}

/**
 * A frozen descriptor from a service's declaration: its role list, ports and start come from
 * its role declarations, its `env` from its `readConfig` (every role, so Kafka too).
 */
export function defineService<
  Role extends string,
  DB extends OutboxTables,
  Config extends ServiceConfig,
>(service: ServiceDeclaration<Role, DB, Config>): ServiceDescriptor<Role, Config> {
  const declarations = service.roles;
  const roles = Object.keys(declarations) as Role[];
  const each = <T>(
    pick: (declaration: RoleDeclaration<DB, Config>, role: Role) => T,
  ): Record<Role, T> =>
    Object.fromEntries(roles.map((role) => [role, pick(declarations[role], role)])) as Record<
      Role,
      T
    >;
  const env = describeEnv((read) => service.readConfig(read, { needsKafka: true }));
  const logins = each((_, role) => `${service.componentPrefix}-${role}`);
  return Object.freeze({
    ...service,
    programs: service.programs ?? { main: 'src/main.ts', migrate: 'src/migrate.ts' },
    roles: Object.freeze(roles),
    ports: Object.freeze(each((declaration) => declaration.port)),
    summaries: Object.freeze(each((declaration) => declaration.summary)),
    logins: Object.freeze(logins),
    rolesNeedKafka: (chosen: readonly Role[]) =>
      chosen.some((role) => declarations[role].kind === 'kafka-worker'),
    start: async (options: StartServiceOptions<Role, Config>) => {
      const running = await startServiceRoles(declarations, options);
      options.logger.info({ roles: options.roles, url: running.url }, `${service.name} started`);
      return running;
    },
    migrate: async (options: { url: string; logger: Logger }) => {
      await service.migrate(options);
      await withOneConnection(options, (db) =>
        grantRoleLogins(
          db,
          roles.map((role) => ({ login: logins[role], access: declarations[role].access })),
          options.logger,
        ),
      );
    },
    env,
  });
}
