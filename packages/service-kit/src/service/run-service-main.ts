import type { Logger } from 'pino';
import { createEnvReader } from '../config/env-reader.ts';
import type { ServiceConfig } from '../config/service-config.ts';
import { provisionServiceTopics } from '../infrastructure/topics/provision-service-topics.ts';
import { checkLogin } from '../database/login-refused.ts';
import { createLogger } from '../logger.ts';
import { parseRoles, roleProcessName } from '../roles/roles.ts';
import { runUntilSignal } from '../roles/run-until-signal.ts';
import { startOtlpTracing } from '../tracing/register-tracing.ts';
import type { ServiceDescriptor } from './service-descriptor.ts';
import type { ServiceHooks } from './service-hooks.ts';

/**
 * The body of a service's main program: the roles from `--roles` (or ROLES, or all), the
 * configuration read once, then the roles run until SIGTERM / SIGINT and stop gracefully. A
 * harness's own entry point passes `hooks` for the service's workers.
 */
export async function runServiceMain<Role extends string, Config extends ServiceConfig>(
  service: ServiceDescriptor<Role, Config>,
  options: { argv: readonly string[]; env: NodeJS.ProcessEnv; hooks?: ServiceHooks },
): Promise<void> {
  let logger: Logger | undefined;
  await runUntilSignal(
    async () => {
      const roles = parseRoles(options.argv, options.env, service.roles);
      // Every connection of this process (pool, LISTEN) shows its roles in pg_stat_activity and
      // can be told apart in PostgreSQL's statistics; node-postgres reads PGAPPNAME, and an
      // application_name in the database URL still wins.
      const processName = roleProcessName(service.name, roles, service.roles);
      process.env['PGAPPNAME'] ??= processName;
      const config = service.readConfig(createEnvReader(options.env), {
        needsKafka: service.rolesNeedKafka(roles),
      });
      await checkLogin(config.databaseUrl, processName);
      logger = createLogger({ service: service.name, level: config.logLevel });
      // Before the roles, so their first spans are recorded; stopped after them, so their
      // last spans are flushed.
      const tracing = await startOtlpTracing(service.name, config.otlpEndpoint);
      const running = await service.start({ config, roles, logger, hooks: options.hooks });
      if (tracing === undefined) return running;
      return {
        async stop() {
          await running.stop();
          await tracing.stop();
        },
      };
    },
    { logger: () => logger },
  );
}

/**
 * The body of a service's migrate program: DATABASE_URL to the latest schema, then the topics
 * the service publishes to on KAFKA_BROKERS (when set), then exit.
 */
export async function runMigrateMain(
  service: ServiceDescriptor,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const logger = createLogger({ service: service.name, level: 'info' });
  try {
    const url = createEnvReader(env).url('DATABASE_URL', ['postgres', 'postgresql']);
    await service.migrate({ url, logger });
    logger.info(`${service.name} database is up to date`);
    await provisionServiceTopics({ env, service: service.name, topics: service.topics, logger });
  } catch (error) {
    console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  }
}
