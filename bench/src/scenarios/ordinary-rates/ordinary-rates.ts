import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findFreePort } from '@outbox-inbox/infra';
import { paymentService } from '@outbox-inbox/payment-service';
import { startDashboard, type RunningDashboard } from '@outbox-inbox/launcher';
import { sql } from 'kysely';
import { defineScenario, type BenchContext } from '../../context.ts';
import { offerOrders } from '../../load.ts';
import { sleep } from '../../stats.ts';
import {
  startRoleSystem,
  systemRoles,
  untilNothingPending,
  type RoleSystem,
} from '../../role-system/start-role-system.ts';
import { profiledCommand, summarizeProfile } from './cpu-profile.ts';
import { measureWindow, type Window } from './measure-window.ts';
import { ordinaryRatesSection, type OrdinaryRates } from './ordinary-rates-section.ts';

interface Bench {
  readonly system: RoleSystem;
  /** Started as `pnpm dev` starts it; no page opens it, so it samples at its idle pace. */
  readonly dashboard: RunningDashboard;
}

async function setUp(ctx: BenchContext): Promise<Bench> {
  // `pnpm dev`'s simulated provider latency: the ordinary system a user first runs.
  const system = await startRoleSystem(ctx, { id: 'b9', settings: { PAYMENT_LATENCY_MS: '20' } });
  const dashboard = await startDashboard({
    stack: ctx.stack,
    orderApiUrl: system.apiUrl,
    databaseUrls: system.databaseUrls,
    port: await findFreePort(),
  });
  return { system, dashboard };
}

/** Each role login's sessions in `pg_stat_activity`, and whether each names its role. */
async function namedInPostgres(system: RoleSystem): Promise<OrdinaryRates['namedInPostgres']> {
  const result = await sql<{ login: string; name: string }>`
    SELECT usename AS login, application_name AS name FROM pg_stat_activity
    WHERE usename = ANY(${systemRoles.map((r) => r.name)}::text[])`.execute(system.orders);
  return systemRoles.map((r) => {
    const sessions = result.rows.filter((row) => row.login === r.name);
    return { role: r.name, seen: sessions.length > 0 && sessions.every((s) => s.name === r.name) };
  });
}

/** One read of each service's api, so every role has connected before the names are looked at. */
async function readEachApi(system: RoleSystem): Promise<void> {
  const order = await sql<{ id: string }>`SELECT id::text AS id FROM orders LIMIT 1`.execute(
    system.orders,
  );
  const orderId = order.rows[0]?.id ?? '';
  for (const [i, role] of systemRoles.entries()) {
    if (role.role !== 'api') continue;
    const read = role.service === paymentService ? `/payments?orderId=${orderId}` : '/orders';
    await fetch(`${system.roles[i]?.url}${read}`).then((response) => response.arrayBuffer());
  }
}

/**
 * Every role under V8's profiler: restarted with `--cpu-prof`, warmed up, left idle for a span,
 * loaded at `profileRate` orders/s for a span, stopped (which writes the profiles); each span
 * summarized on its own, the start-up left out.
 */
async function profileRoles(ctx: BenchContext, system: RoleSystem) {
  const { profileRate: rate, profileSeconds: seconds } = ctx.settings;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'b9-profiles-'));
  try {
    await system.restartRoles(profiledCommand(dir));
    await offerOrders({ baseUrl: system.apiUrl, rate, seconds: 5 });
    await untilNothingPending(system.orders, 'the profile warm-up through the pipeline');
    const idleStarted = performance.now();
    await sleep(seconds * 1000);
    const loadStarted = performance.now();
    const load = await offerOrders({ baseUrl: system.apiUrl, rate, seconds });
    await untilNothingPending(system.orders, 'the profiled orders through the pipeline');
    await system.stopRoles();
    const secondsSince = (at: number) => (performance.now() - at) / 1000;
    const loaded = { fromSecondsBeforeEnd: secondsSince(loadStarted) };
    const idle = {
      fromSecondsBeforeEnd: secondsSince(idleStarted),
      toSecondsBeforeEnd: loaded.fromSecondsBeforeEnd,
    };
    const summarize = (span: Parameters<typeof summarizeProfile>[2]) =>
      systemRoles.map((r) => summarizeProfile(r.name, path.join(dir, r.name), span));
    return {
      profiles: summarize(loaded),
      idleProfiles: summarize(idle),
      profileOrders: load.committed.size,
      profileIdleSeconds: seconds,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(ctx: BenchContext, { system }: Bench): Promise<OrdinaryRates> {
  const { ordinarySeconds: seconds, ordinaryRates, longRate, longWindows } = ctx.settings;
  // Warm-up: prepared statements, producers, the consumers' first fetches; then quiet.
  await offerOrders({ baseUrl: system.apiUrl, rate: 30, seconds: 5 });
  await untilNothingPending(system.orders, 'the warm-up through the pipeline');
  await readEachApi(system);
  const named = await namedInPostgres(system);
  ctx.log('B9 idle');
  const idle = await measureWindow(ctx, system, { rate: 0, seconds });
  const steps: Window[] = [];
  for (const rate of ordinaryRates) {
    ctx.log(`B9 at ${rate} orders/s`);
    steps.push(await measureWindow(ctx, system, { rate, seconds }));
  }
  const long: Window[] = [];
  for (let i = 0; i < longWindows; i++) {
    ctx.log(`B9 long step at ${longRate}/s, window ${i + 1} of ${longWindows}`);
    long.push(
      await measureWindow(ctx, system, { rate: longRate, seconds: ctx.settings.longWindowSeconds }),
    );
  }
  ctx.log('B9 profiling every role');
  const profiled = await profileRoles(ctx, system);
  return { idle, steps, long, ...profiled, namedInPostgres: named };
}

/**
 * B9: the whole system as `pnpm dev` runs it (every role its own process, the dashboard with no
 * page open) idle and at the rates people run, then a long step for drift and a CPU profile of
 * each role.
 */
export const ordinaryRates = defineScenario({
  id: 'B9',
  setUp,
  measure,
  report: (ctx, _bench, measured) => ordinaryRatesSection(ctx.settings, measured),
  tearDown: async ({ system, dashboard }) => {
    await dashboard.stop();
    await system.stop();
  },
});
