import type { FastifyInstance } from 'fastify';
import { sql, type Kysely } from 'kysely';

export interface HealthOptions<DB> {
  readonly db: Kysely<DB>;
  readonly timeoutMs?: number;
}

async function databaseReachable<DB>(db: Kysely<DB>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const probe = sql`SELECT 1`.execute(db).then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `/health/live`: the process answers. `/health/ready`: the database answers, because without it
 * no write can be accepted. Kafka is deliberately not checked: while it is down the outbox keeps
 * accepting writes, which is the point of the pattern (R-DIST-OBX-3).
 */
export function registerHealthRoutes<DB>(app: FastifyInstance, options: HealthOptions<DB>): void {
  const timeoutMs = options.timeoutMs ?? 2000;
  app.get('/health/live', { logLevel: 'warn' }, async () => ({ status: 'ok' }));
  app.get('/health/ready', { logLevel: 'warn' }, async (_request, reply) => {
    if (await databaseReachable(options.db, timeoutMs)) {
      return { status: 'ok', checks: { database: 'ok' } };
    }
    return reply.code(503).send({ status: 'unavailable', checks: { database: 'unreachable' } });
  });
}
