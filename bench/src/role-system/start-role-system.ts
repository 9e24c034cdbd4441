import { topicDeclarations } from '@outbox-inbox/contracts';
import { pollUntil, urlAsLogin } from '@outbox-inbox/infra';
import { migrateService, roleProcesses } from '@outbox-inbox/launcher';
import { orderService } from '@outbox-inbox/order-service';
import type { OutboxTables } from '@outbox-inbox/outbox';
import { paymentService } from '@outbox-inbox/payment-service';
import type { Command } from '@outbox-inbox/service-kit';
import { sql, type Kysely } from 'kysely';
import type { BenchContext } from '../context.ts';
import { serverGroups } from '../cpu.ts';
import { benchDb } from '../database.ts';
import { freshTopics } from '../kafka.ts';
import { startRole, type RoleHandle } from '../services.ts';
import { enableStatementCounts } from './role-logins.ts';

/**
 * Each role process of `pnpm dev` as the services declare them; each logs in under its name, the
 * login the migrate step granted the role's access.
 */
export const systemRoles = roleProcesses();

export interface RoleSystem {
  readonly apiUrl: string;
  readonly orders: Kysely<OutboxTables>;
  readonly payments: Kysely<OutboxTables>;
  /** The two services' databases, as the superuser connects. */
  readonly databaseUrls: readonly string[];
  /** The running role processes, in the order of {@link systemRoles}. */
  readonly roles: readonly RoleHandle[];
  /** Each role process by its name (`order-relay`), PostgreSQL and Kafka: `startCpuMeter`'s groups. */
  cpuGroups(): Record<string, number | undefined>;
  /**
   * Stops the role processes and starts them again, each run by `command` (a profiler's flags),
   * on the same databases and topics.
   */
  restartRoles(command?: (role: (typeof systemRoles)[number]) => Command): Promise<void>;
  /** Stops the role processes gracefully (a profiled one writes its profile then). */
  stopRoles(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Every role of both services as its own process, as `pnpm dev` runs them, on fresh databases
 * (`bench_<id>_orders`, `bench_<id>_payments`) and topics. Each process logs in as itself, so
 * PostgreSQL's statistics split by role.
 */
export async function startRoleSystem(
  ctx: BenchContext,
  options: { readonly id: string; readonly settings: Readonly<Record<string, string>> },
): Promise<RoleSystem> {
  const urls = {
    [orderService.name]: await ctx.stack.createDatabase(`bench_${options.id}_orders`),
    [paymentService.name]: await ctx.stack.createDatabase(`bench_${options.id}_payments`),
  };
  const urlOf = (service: { name: string }) => urls[service.name] ?? '';
  await migrateService(orderService, urlOf(orderService));
  await migrateService(paymentService, urlOf(paymentService));
  await freshTopics(
    ctx.kafka,
    topicDeclarations.map((topic) => ({ topic: topic.name, partitions: topic.partitions })),
  );
  await enableStatementCounts(ctx.stack);
  let generation = 0;
  const start = (command?: (role: (typeof systemRoles)[number]) => Command) => {
    const prefix = `${options.id}-${generation++}`;
    return Promise.all(
      systemRoles.map((r) =>
        startRole(ctx.stack, {
          component: `${prefix}-${r.name}`,
          service: r.service,
          role: r.role,
          databaseUrl: urlAsLogin(urlOf(r.service), r.name),
          settings: options.settings,
          command: command?.(r),
        }),
      ),
    );
  };
  let roles = await start();
  const api = systemRoles.findIndex((r) => r.service === orderService && r.role === 'api');
  const orders = benchDb<OutboxTables>(urlOf(orderService));
  const payments = benchDb<OutboxTables>(urlOf(paymentService));
  const system: RoleSystem = {
    // The api moves to a new port when the roles restart.
    get apiUrl() {
      return roles[api]?.url ?? '';
    },
    orders,
    payments,
    databaseUrls: Object.values(urls),
    get roles() {
      return roles;
    },
    cpuGroups: () => ({
      ...Object.fromEntries(systemRoles.map((r, i) => [r.name, roles[i]?.pid()])),
      ...serverGroups(ctx.stack),
    }),
    async restartRoles(command) {
      await this.stopRoles();
      roles = await start(command);
    },
    async stopRoles() {
      await Promise.all(roles.map((r) => r.stop()));
      roles = [];
    },
    async stop() {
      await this.stopRoles();
      await Promise.all([orders.destroy(), payments.destroy()]);
    },
  };
  return system;
}

/** Waits until no order is PENDING: every accepted one went through the whole pipeline. */
export async function untilNothingPending(
  orders: Kysely<OutboxTables>,
  description: string,
): Promise<void> {
  await pollUntil(
    async () => {
      const result = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM orders WHERE status = 'PENDING'`.execute(orders);
      return result.rows[0]?.n === 0 ? true : undefined;
    },
    { timeoutMs: 120_000, description },
  );
}
