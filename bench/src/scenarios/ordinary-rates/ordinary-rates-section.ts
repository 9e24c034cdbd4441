import type { Section, Table, Target } from '../../report.ts';
import type { RequestCounts } from '../../role-system/kafka-requests.ts';
import { systemRoles } from '../../role-system/start-role-system.ts';
import type { BenchSettings } from '../../settings.ts';
import { fixed, int, percentile } from '../../stats.ts';
import type { ProfileSummary } from './cpu-profile.ts';
import type { Window } from './measure-window.ts';

/** What B9 measured, in the order it ran. */
export interface OrdinaryRates {
  readonly idle: Window;
  readonly steps: readonly Window[];
  readonly long: readonly Window[];
  /** Each role's profile while loaded (over `profileOrders`) and while idle. */
  readonly profiles: readonly ProfileSummary[];
  readonly profileOrders: number;
  readonly idleProfiles: readonly ProfileSummary[];
  readonly profileIdleSeconds: number;
  /** Each role's `application_name` as `pg_stat_activity` showed it, or missing. */
  readonly namedInPostgres: readonly { readonly role: string; readonly seen: boolean }[];
}

const roleNames = systemRoles.map((r) => r.name);
const servers = ['postgres', 'kafka'];
/** The bench's own process: while idle it runs only the dashboard (no page open). */
const DASHBOARD = 'bench';

const stepName = (w: Window, i?: number) =>
  w.rate === 0 ? 'idle' : i === undefined ? `${w.rate}/s` : `${w.rate}/s, window ${i + 1}`;

/** CPU-seconds of `groups` over the window. */
const cpuOf = (w: Window, groups: readonly string[]) =>
  groups.reduce((sum, g) => sum + (w.cpu.byName[g] ?? 0), 0);

/**
 * The whole stack's cores: PostgreSQL, Kafka and every role; idle also the dashboard, which
 * shares the bench's process (under load that process is mostly the load generator).
 */
const stackGroups = (w: Window) => [...roleNames, ...servers, ...(w.rate === 0 ? [DASHBOARD] : [])];
const stackCores = (w: Window) => cpuOf(w, stackGroups(w)) / w.cpu.wallSeconds;
const cpuMsPerOrder = (w: Window) => (cpuOf(w, [...roleNames, ...servers]) * 1000) / w.orders;
const ms = (values: readonly number[], p: number) =>
  values.length === 0 ? '–' : int(percentile(values, p));

function stackTable(windows: readonly { name: string; w: Window }[]): Table {
  return {
    caption: 'The whole system per step (cores: CPU-seconds per second; 1.00 = one core busy)',
    headers: [
      'step',
      'orders accepted',
      'failed',
      'whole stack cores',
      'postgres',
      'kafka',
      'role processes',
      'dashboard (idle only)',
      'CPU-ms per order',
      'commit → PAID p50 / p99 ms',
    ],
    rows: windows.map(({ name, w }) => [
      name,
      int(w.orders),
      int(w.failed),
      fixed(stackCores(w), 3),
      fixed(cpuOf(w, ['postgres']) / w.cpu.wallSeconds, 3),
      fixed(cpuOf(w, ['kafka']) / w.cpu.wallSeconds, 3),
      fixed(cpuOf(w, roleNames) / w.cpu.wallSeconds, 3),
      w.rate === 0 ? fixed(cpuOf(w, [DASHBOARD]) / w.cpu.wallSeconds, 3) : '–',
      w.orders > 0 ? fixed(cpuMsPerOrder(w)) : '–',
      `${ms(w.paidMs, 50)} / ${ms(w.paidMs, 99)}`,
    ]),
  };
}

/** One row per process, one column per step. */
function perProcessTable(
  caption: string,
  windows: readonly { name: string; w: Window }[],
  rows: readonly string[],
  cell: (w: Window, row: string, index: number) => string,
): Table {
  return {
    caption,
    headers: ['process', ...windows.map(({ name }) => name)],
    rows: rows.map((row, index) => [row, ...windows.map(({ w }) => cell(w, row, index))]),
  };
}

const sumOf = (requests: RequestCounts | undefined) =>
  [...(requests ?? new Map<string, number>()).values()].reduce((sum, n) => sum + n, 0);

/** Per order under load; per minute idle (there are no orders to divide by). */
const rateOf = (n: number, w: Window) =>
  w.rate === 0 ? `${fixed((n * 60) / w.cpu.wallSeconds, 1)}/min` : fixed(n / w.orders);

function profileTable(
  caption: string,
  profiles: readonly ProfileSummary[],
  per: { readonly unit: string; readonly count: number },
): Table {
  const share = (part: number, whole: number) => `${Math.round((part / whole) * 100)} %`;
  return {
    caption,
    headers: ['role', `busy CPU-ms per ${per.unit}`, 'by package', 'busiest frames'],
    rows: profiles.map((p) => [
      p.role,
      fixed(p.busyMs / Math.max(per.count, 1)),
      p.areas.map((a) => `${a.area} ${share(a.ms, p.busyMs)}`).join(', '),
      p.frames.map((f) => `${f.frame} ${share(f.ms, p.busyMs)}`).join('; '),
    ]),
  };
}

/**
 * PostgreSQL's CPU split by process, one row per label any window saw, the busiest at the
 * highest rate first: which role's sessions cost the server most, and what its own processes
 * (the WAL writer, autovacuum, the checkpointer) add.
 */
function postgresTable(windows: readonly { name: string; w: Window }[]): Table {
  const busiest = windows.at(-1)?.w;
  const labels = [...new Set(windows.flatMap(({ w }) => Object.keys(w.postgresByProcess)))].sort(
    (a, b) => (busiest?.postgresByProcess[b] ?? 0) - (busiest?.postgresByProcess[a] ?? 0),
  );
  return perProcessTable(
    "PostgreSQL's CPU by process, % of one core (a session by its login; exited: what the server reaped in the window)",
    windows,
    labels,
    (w, label) => fixed(((w.postgresByProcess[label] ?? 0) / w.cpu.wallSeconds) * 100, 1),
  );
}

/**
 * At one loaded step, the statements PostgreSQL spent the most execution time on, per order:
 * which query of which role a server's CPU per order goes to.
 */
function costliestStatementsTable(w: Window): Table {
  const rows = w.statements
    .flatMap((login) => login.top.map((statement) => ({ login: login.login, ...statement })))
    .sort((a, b) => b.execMs + b.planMs - (a.execMs + a.planMs))
    .slice(0, 10);
  return {
    caption: `At ${w.rate} orders/s: the statements PostgreSQL spent the most time on, planning and execution (pg_stat_statements)`,
    headers: [
      'role',
      'ms per order',
      'planning ms per order',
      'calls per order',
      'ms per call',
      'statement',
    ],
    rows: rows.map((r) => [
      r.login,
      fixed(r.execMs / w.orders, 3),
      fixed(r.planMs / w.orders, 3),
      fixed(r.calls / w.orders),
      fixed(r.execMs / Math.max(r.calls, 1), 3),
      r.query.replace(/\s+/g, ' ').slice(0, 90),
    ]),
  };
}

/** Idle, what each role still sends to PostgreSQL: its polls, probes and metrics queries. */
function idleStatementsTable(idle: Window): Table {
  const perMinute = (calls: number) => fixed((calls * 60) / idle.cpu.wallSeconds, 1);
  return {
    caption: 'Idle: statements per minute, per role (the most executed first)',
    headers: ['role', 'per minute', 'statement'],
    rows: idle.statements.flatMap((login) =>
      login.top.map((statement) => [
        login.login,
        perMinute(statement.calls),
        statement.query.replace(/\s+/g, ' ').slice(0, 90),
      ]),
    ),
  };
}

/** Idle, what each role still asks Kafka: fetches, heartbeats, metadata. */
function idleKafkaTable(idle: Window): Table {
  return {
    caption: 'Idle: Kafka requests per minute, per role, by API',
    headers: ['role', 'per minute', 'API'],
    rows: roleNames.flatMap((role, i) =>
      [...(idle.kafka[i] ?? new Map<string, number>())]
        .filter(([, n]) => n > 0)
        .sort((a, b) => b[1] - a[1])
        .map(([api, n]) => [role, fixed((n * 60) / idle.cpu.wallSeconds, 1), api]),
    ),
  };
}

/** The long step's last window against its first: CPU per order, p99 and memory. */
function driftTargets(long: readonly Window[]): Target[] {
  const first = long[0];
  const last = long.at(-1);
  if (first === undefined || last === undefined || long.length < 2) return [];
  // Kafka's JVM fills its fixed heap before it collects: its growth is shown, not judged.
  const grew = [...roleNames, 'postgres'].filter((name) => {
    const before = first.privateBytes[name] ?? 0;
    return (last.privateBytes[name] ?? 0) > before * 1.1 + 5e6;
  });
  const p99 = (w: Window) => percentile(w.paidMs, 99);
  return [
    {
      name: 'B9 long step: CPU per order',
      goal: 'last window ≤ 1.15 × the first',
      measured: `${fixed(cpuMsPerOrder(first))} → ${fixed(cpuMsPerOrder(last))} ms`,
      met: cpuMsPerOrder(last) <= cpuMsPerOrder(first) * 1.15,
    },
    {
      name: 'B9 long step: p99 commit → PAID',
      goal: 'last window ≤ 1.25 × the first + 50 ms',
      measured: `${int(p99(first))} → ${int(p99(last))} ms`,
      met: p99(last) <= p99(first) * 1.25 + 50,
    },
    {
      name: "B9 long step: each role's and PostgreSQL's private memory",
      goal: 'last window ≤ 1.1 × the first + 5 MB',
      measured: grew.length === 0 ? 'none grew' : `grew: ${grew.join(', ')}`,
      met: grew.length === 0,
    },
  ];
}

export function ordinaryRatesSection(settings: BenchSettings, b9: OrdinaryRates): Section {
  const steps = [b9.idle, ...b9.steps].map((w) => ({ name: stepName(w), w }));
  const long = b9.long.map((w, i) => ({ name: stepName(w, i), w }));
  const all = [...steps, ...long];
  const at30 = b9.steps.find((w) => w.rate === 30);
  const unnamed = b9.namedInPostgres.filter((r) => !r.seen).map((r) => r.role);
  const mb = (bytes: number | undefined) => fixed((bytes ?? 0) / 1e6, 1);
  return {
    id: 'B9',
    title: `Ordinary rates: idle, ${settings.ordinaryRates.join(', ')} orders/s (${settings.ordinarySeconds} s each), ${settings.longRate}/s for ${settings.longWindows} × ${settings.longWindowSeconds} s`,
    tables: [
      stackTable(all),
      perProcessTable('CPU per process, % of one core', all, [...roleNames, ...servers], (w, row) =>
        fixed(((w.cpu.byName[row] ?? 0) / w.cpu.wallSeconds) * 100, 1),
      ),
      perProcessTable(
        'Private memory per process at the end of each step, MB (PostgreSQL: all its processes)',
        all,
        [...roleNames, ...servers],
        (w, row) => mb(w.privateBytes[row]),
      ),
      postgresTable(steps),
      perProcessTable(
        'SQL statements per order, per role (idle: per minute), counted by pg_stat_statements',
        all,
        roleNames,
        (w, _row, i) => rateOf(w.statements[i]?.statements ?? 0, w),
      ),
      perProcessTable(
        'PostgreSQL execution ms per order, per role (idle: per minute), from pg_stat_statements',
        all,
        roleNames,
        (w, _row, i) =>
          w.rate === 0
            ? `${fixed(((w.statements[i]?.execMs ?? 0) * 60) / w.cpu.wallSeconds, 1)}/min`
            : fixed((w.statements[i]?.execMs ?? 0) / w.orders, 3),
      ),
      perProcessTable(
        'PostgreSQL planning ms per order, per role (idle: per minute), from pg_stat_statements',
        all,
        roleNames,
        (w, _row, i) =>
          w.rate === 0
            ? `${fixed(((w.statements[i]?.planMs ?? 0) * 60) / w.cpu.wallSeconds, 1)}/min`
            : fixed((w.statements[i]?.planMs ?? 0) / w.orders, 3),
      ),
      ...(at30 === undefined ? [] : [costliestStatementsTable(at30)]),
      perProcessTable(
        'Kafka requests per order, per role (idle: per minute), counted by each role',
        all,
        roleNames,
        (w, _row, i) => rateOf(sumOf(w.kafka[i]), w),
      ),
      idleStatementsTable(b9.idle),
      idleKafkaTable(b9.idle),
      profileTable(
        `Where each role's CPU goes at ${settings.profileRate} orders/s (V8's sampling profiler, self time, over ${b9.profileOrders} orders)`,
        b9.profiles,
        { unit: 'order', count: b9.profileOrders },
      ),
      profileTable(
        `Where each role's CPU goes while idle (the same processes, ${b9.profileIdleSeconds} s before that load)`,
        b9.idleProfiles,
        { unit: 'second', count: b9.profileIdleSeconds },
      ),
    ],
    notes: [
      "Every role runs as its own process with its own PostgreSQL login (so statements split by role), PAYMENT_LATENCY_MS=20 as `pnpm dev` sets it, on the bench's durable PostgreSQL. The dashboard runs in the bench's process with no page open; idle, that process does nothing else, so its CPU is the dashboard's. Under load the bench process is the load generator and is left out.",
      'Statements and Kafka requests of a step include the drain after its load and the idle polls meanwhile. The profile runs after the other steps, every role restarted under `node --cpu-prof`; only the samples of the loaded span count.',
    ],
    targets: [
      {
        name: 'B9 idle: whole stack',
        goal: '≤ 0.08 cores',
        measured: `${fixed(stackCores(b9.idle), 3)} cores`,
        met: stackCores(b9.idle) <= 0.08,
      },
      ...(at30 === undefined
        ? []
        : [
            {
              name: 'B9 30 orders/s: whole stack',
              goal: '≤ 0.45 cores',
              measured: `${fixed(stackCores(at30), 3)} cores`,
              met: stackCores(at30) <= 0.45,
            },
          ]),
      ...driftTargets(b9.long),
      {
        name: 'B9: every role named in pg_stat_activity',
        goal: `all ${roleNames.length}, each session named`,
        measured: unnamed.length === 0 ? `all ${roleNames.length}` : `not: ${unnamed.join(', ')}`,
        met: unnamed.length === 0,
      },
    ],
  };
}
