import { migrateOutbox } from '@outbox-inbox/outbox';
import type { Kysely } from 'kysely';
import { Migrator, type Migration } from 'kysely/migration';

/**
 * Brings a service's database to the latest schema: the outbox library's tables (tracked in
 * their own migration table), then the service's, tracked in `migrationTableName` so two
 * services could share one database. Safe to run on every start and from several processes.
 * A failure names the service and the migration that failed.
 */
export async function migrateServiceSchema(
  db: Kysely<unknown>,
  options: {
    service: string;
    migrations: Readonly<Record<string, Migration>>;
    migrationTableName: string;
  },
): Promise<void> {
  await migrateOutbox(db);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => ({ ...options.migrations }) },
    migrationTableName: options.migrationTableName,
    migrationLockTableName: `${options.migrationTableName}_lock`,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName;
    throw new Error(`${options.service} migration ${failed ?? '(unknown)'} failed`, {
      cause: error,
    });
  }
}
