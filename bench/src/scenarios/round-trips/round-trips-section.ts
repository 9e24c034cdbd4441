import type { Section, Table } from '../../report.ts';
import type { RequestCounts } from '../../role-system/kafka-requests.ts';
import type { LoginCounts, WalCounts } from '../../role-system/server-counts.ts';

/** What B10 counted over its orders. */
export interface RoundTripCounts {
  readonly orders: number;
  readonly rate: number;
  readonly logins: readonly LoginCounts[];
  readonly wal: WalCounts;
  /** Kafka requests per role (same order as `logins`), by API. */
  readonly kafka: readonly RequestCounts[];
}

const perOrder = (n: number, orders: number) => (n / Math.max(orders, 1)).toFixed(2);

const sumOf = (requests: RequestCounts | undefined): number =>
  [...(requests ?? new Map<string, number>()).values()].reduce((sum, n) => sum + n, 0);

/** One row per role and one for all: statements, COMMITs, WAL and Kafka requests per order. */
function perRoleTable(counts: RoundTripCounts): Table {
  const { orders } = counts;
  const roles = counts.logins.map((login, i) => ({
    name: login.login,
    values: [
      login.statements,
      login.commits,
      login.walRecords,
      login.walBytes,
      sumOf(counts.kafka[i]),
    ],
  }));
  const all = roles[0]?.values.map((_, column) =>
    roles.reduce((sum, role) => sum + (role.values[column] ?? 0), 0),
  );
  return {
    headers: [
      'role',
      'SQL statements',
      'transactions (COMMIT)',
      'WAL records',
      'WAL bytes',
      'Kafka requests',
    ],
    rows: [...roles, { name: 'all roles', values: all ?? [] }].map((role) => [
      role.name,
      ...role.values.map((n) => perOrder(n, orders)),
    ]),
  };
}

/** The per-role table, the server's WAL, and each role's statements and Kafka APIs per order. */
export function roundTripsSection(counts: RoundTripCounts): Section {
  const { orders } = counts;
  return {
    id: 'B10',
    title: `Round trips per order: ${orders} orders at ${counts.rate}/s, counted`,
    tables: [
      perRoleTable(counts),
      {
        caption: "The whole server (pg_stat_wal, the bench's own queries included)",
        headers: ['WAL records', 'WAL writes', 'WAL flushes (fsync)'],
        rows: [
          [
            perOrder(counts.wal.records, orders),
            perOrder(counts.wal.writes, orders),
            perOrder(counts.wal.syncs, orders),
          ],
        ],
      },
      {
        caption: 'Kafka requests per order, per role, by API',
        headers: ['role', 'per order', 'API'],
        rows: counts.logins.flatMap((login, i) =>
          [...(counts.kafka[i] ?? new Map<string, number>())]
            .filter(([, n]) => n > 0)
            .sort((a, b) => b[1] - a[1])
            .map(([api, n]) => [login.login, perOrder(n, orders), api]),
        ),
      },
      {
        caption: 'Statements per order, per role (the most executed first)',
        headers: ['role', 'per order', 'statement'],
        rows: counts.logins.flatMap((login) =>
          login.top
            .filter((statement) => statement.calls / orders >= 0.01)
            .map((statement) => [
              login.login,
              perOrder(statement.calls, orders),
              statement.query.replace(/\s+/g, ' ').slice(0, 90),
            ]),
        ),
      },
    ],
    notes: [
      "Counted, not estimated: each role process logs in as itself, and pg_stat_statements keys its counts by login. Statements include BEGIN, COMMIT and the idle polls during the window; a query string of several statements counts each. WAL flushes are the cluster's (a group commit flushes several commits at once). Kafka requests are each role's kafka_requests_total (kafkajs REQUEST events: answered requests, heartbeats and metadata included).",
    ],
    targets: [],
  };
}
