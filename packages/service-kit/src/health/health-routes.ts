import type { StallWatch } from '@outbox-inbox/outbox/ops';
import type { FastifyInstance } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { AdmissionState } from '../http/admission/admission-gate.ts';
import { loginRefusal } from '../database/login-refused.ts';

export interface HealthOptions<DB> {
  readonly db: Kysely<DB>;
  readonly timeoutMs?: number;
  /** The workers of this process report here; a stalled one makes readiness "degraded". */
  readonly stalls?: StallWatch | undefined;
  /** The api's admission; requests refused lately make readiness "degraded" (still 200). */
  readonly admission?: AdmissionState | undefined;
}

type WorkerCheck = { status: 'ok' } | { status: 'stalled'; reason: string };
type AdmissionCheck = { status: 'ok' } | { status: 'refusing'; reason: string };

function admissionCheck(admission: AdmissionState): AdmissionCheck {
  const refused = admission.recentRefusals();
  if (refused === 0) return { status: 'ok' };
  const { maxInFlight, maxWaitMs, maxWaiting = maxInFlight } = admission.options;
  return {
    status: 'refusing',
    reason: `${refused} requests refused with 503 in the last 10 s: all ${maxInFlight} slots were busy for longer than ${maxWaitMs} ms, or ${maxWaiting} requests already waited for one (offered load above what this process carries)`,
  };
}

function workerChecks(stalls: StallWatch): Record<string, WorkerCheck> {
  const checks: Record<string, WorkerCheck> = {};
  for (const worker of stalls.workers()) {
    checks[worker.worker] =
      worker.stalled && worker.reason !== undefined
        ? { status: 'stalled', reason: worker.reason }
        : { status: 'ok' };
  }
  return checks;
}

/** What the readiness probe found of the database: a refused login says so, with the reason. */
type DatabaseCheck =
  'ok' | 'unreachable' | { readonly status: 'login-refused'; readonly reason: string };

async function databaseCheck<DB>(db: Kysely<DB>, timeoutMs: number): Promise<DatabaseCheck> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<DatabaseCheck>((resolve) => {
    timer = setTimeout(() => resolve('unreachable'), timeoutMs);
  });
  const probe = sql`SELECT 1`.execute(db).then(
    (): DatabaseCheck => 'ok',
    (error: unknown): DatabaseCheck => {
      const refusal = loginRefusal(error);
      return refusal === undefined ? 'unreachable' : { status: 'login-refused', reason: refusal };
    },
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
 * accepting writes, which is the point of the pattern (R-DIST-OBX-3). A worker of this process
 * that has work and makes no progress (see `StallWatch`) turns the answer "degraded", still 200:
 * taking the process out of service would not unstick it, and its API still works; the body
 * says which worker and why, for a human or an alert. So does an api that refused requests
 * lately (it is at capacity): it still serves what fits, and taking it out would only move its
 * load to the others.
 */
export function registerHealthRoutes<DB>(app: FastifyInstance, options: HealthOptions<DB>): void {
  const timeoutMs = options.timeoutMs ?? 2000;
  app.get('/health/live', { logLevel: 'warn' }, async () => ({ status: 'ok' }));
  app.get('/health/ready', { logLevel: 'warn' }, async (_request, reply) => {
    const workers = options.stalls === undefined ? undefined : workerChecks(options.stalls);
    const admission =
      options.admission === undefined ? undefined : admissionCheck(options.admission);
    const others = {
      ...(admission === undefined ? {} : { admission }),
      ...(workers === undefined ? {} : { workers }),
    };
    const database = await databaseCheck(options.db, timeoutMs);
    if (database !== 'ok') {
      return reply.code(503).send({ status: 'unavailable', checks: { database, ...others } });
    }
    const degraded =
      admission?.status === 'refusing' ||
      Object.values(workers ?? {}).some((check) => check.status === 'stalled');
    return { status: degraded ? 'degraded' : 'ok', checks: { database: 'ok', ...others } };
  });
}
