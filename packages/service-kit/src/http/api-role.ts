import type { OutboxMetrics } from '@outbox-inbox/outbox/ops';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ServiceConfig } from '../config/service-config.ts';
import type { ApiRoleDeclaration, RoleBasics } from '../service/role-declaration.ts';

/** What a service's HTTP app is built from: the process's pool, logger, registry and stalls. */
export interface ServiceAppDeps<DB> {
  readonly db: Kysely<DB>;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly stalls: OutboxMetrics['stalls'];
  readonly admission: ServiceConfig['admission'];
}

/** The `api` role, declared as a service declares it: `api: apiRole({ port, summary }, buildApp)`. */
export function apiRole<DB, Config extends ServiceConfig>(
  basics: RoleBasics,
  buildApp: (deps: ServiceAppDeps<DB>) => FastifyInstance,
): ApiRoleDeclaration<DB, Config> {
  return {
    ...basics,
    kind: 'api',
    app: ({ db, logger, registry, metrics, config }) =>
      buildApp({ db, logger, registry, stalls: metrics.stalls, admission: config.admission }),
  };
}
