import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { migrateCommand, type ServiceDescriptor } from '@outbox-inbox/service-kit';
import { LauncherError } from '../launcher-error.ts';

const run = promisify(execFile);

/**
 * Runs the service's own migrate program against `databaseUrl` (its tables and the outbox's) and,
 * given the brokers, provisions the topics it publishes to.
 */
export async function migrateService(
  service: ServiceDescriptor,
  databaseUrl: string,
  kafkaBrokers: readonly string[] = [],
): Promise<void> {
  const { command, args, cwd, env } = migrateCommand(service, databaseUrl, kafkaBrokers);
  try {
    await run(command, [...args], { cwd, env: { ...process.env, ...env } });
  } catch (error) {
    const output = error instanceof Error && 'stderr' in error ? String(error.stderr).trim() : '';
    throw new LauncherError('MIGRATION_FAILED', `${service.name} migration failed: ${output}`, {
      cause: error,
    });
  }
}
