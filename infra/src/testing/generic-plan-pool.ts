import pg from 'pg';

/**
 * A one-connection pool on which every statement runs on a generic plan: the plan PostgreSQL
 * may keep for a prepared statement after its fifth execution, made without the parameters'
 * values. Each plan comes back as a notice (auto_explain) into `plans`. A test runs the
 * statements it cares about here and checks that no plan reads a whole table: what a process
 * that prepares its statements (createPgPool) would otherwise find out under load.
 */
export function genericPlanPool(connectionString: string): {
  readonly pool: pg.Pool;
  readonly plans: string[];
} {
  const plans: string[] = [];
  const pool = new pg.Pool({ connectionString, max: 1 });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('notice', (notice) => plans.push(notice.message ?? ''));
    // Queued before the first caller's query: a client runs its queries in order.
    client
      .query(
        `SET plan_cache_mode = force_generic_plan; LOAD 'auto_explain';
         SET auto_explain.log_min_duration = 0; SET auto_explain.log_level = notice`,
      )
      .catch(() => undefined);
  });
  return { pool, plans };
}

/** The plans that read all of `table` (a sequential scan), with the statement each ran for. */
export function wholeTableReads(plans: readonly string[], table: string): string[] {
  return plans.filter((plan) => new RegExp(`Seq Scan on ${table}\\b`).test(plan));
}
