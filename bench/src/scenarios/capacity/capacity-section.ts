import { componentNames, services } from '@outbox-inbox/launcher';
import { coreCount, cpuTable } from '../../cpu.ts';
import type { Section, Table, Target } from '../../report.ts';
import { fixed, int } from '../../stats.ts';
import type { CapacitySearch } from './search-capacity.ts';
import type { CapacityStep } from './measure-step.ts';
import { capacityLimits } from './measure-step.ts';

/**
 * Every process group of the system: each role's process as the services declare them, each
 * service's one process (`processes: 'service'`), the servers; `bench` is the load (and, for the
 * guide, its parts).
 */
const SYSTEM_GROUPS = [
  ...componentNames,
  ...services.map((service) => `${service.componentPrefix}-service`),
  'postgres',
  'kafka',
];

const capacityOf = (search: CapacitySearch | undefined): number => search?.carried?.rate ?? 0;

/** The step whose CPU is shown: at capacity, or the lowest rate tried when none was carried. */
function shownStep(search: CapacitySearch) {
  const lowest = [...search.steps].sort((a, b) => a.rate - b.rate)[0];
  return search.carried ?? lowest;
}

const shownName = (search: CapacitySearch): string =>
  search.carried
    ? search.variant.name
    : `${search.variant.name} (at ${shownStep(search)?.rate}/s, missed)`;

function capacityTable(searches: readonly CapacitySearch[]): Table {
  return {
    headers: [
      'system',
      'capacity orders/s',
      'at capacity: handled p99 / PAID p99 ms',
      'rates tried (orders/s: verdict)',
    ],
    rows: searches.map((s) => [
      s.variant.name,
      int(capacityOf(s)),
      s.carried ? `${fixed(s.carried.handledP99Ms, 0)} / ${fixed(s.carried.paidP99Ms, 0)}` : 'n/a',
      s.steps
        .map((step) => `${step.rate}: ${step.failed.length === 0 ? 'ok' : step.failed.join(' + ')}`)
        .join('; '),
    ]),
  };
}

/** CPU-seconds per settled order of the whole system, the load generator excluded. */
function systemSecondsPerOrder(step: CapacityStep): number {
  const systemSeconds = SYSTEM_GROUPS.reduce((sum, g) => sum + (step.cpu.byName[g] ?? 0), 0);
  return systemSeconds / Math.max(step.accepted, 1);
}

/** The system's CPU per settled order, and the bound it implies. */
function boundTable(searches: readonly CapacitySearch[]): Table {
  return {
    caption: `The bound the CPU implies: ${coreCount} cores ÷ the system's CPU-seconds per order (the load generator excluded)`,
    headers: ['system', 'system CPU-ms per order', 'bound orders/s', 'capacity / bound'],
    rows: searches.flatMap((s) => {
      const step = shownStep(s);
      if (step === undefined) return [];
      const perOrder = systemSecondsPerOrder(step);
      const bound = coreCount / perOrder;
      return [[shownName(s), fixed(perOrder * 1000, 2), int(bound), fixed(step.rate / bound, 2)]];
    }),
  };
}

/** Latency at half of each system's capacity: the rate a fork sized with headroom runs at. */
function halfwayTable(searches: readonly CapacitySearch[]): Table {
  return {
    caption: 'At half of capacity (one more step after the search)',
    headers: ['system', 'orders/s', 'handled p99 ms', 'PAID p99 ms', 'system CPU-ms per order'],
    rows: searches.flatMap((s) =>
      s.halfway
        ? [
            [
              s.variant.name,
              int(s.halfway.rate),
              fixed(s.halfway.handledP99Ms, 0),
              fixed(s.halfway.paidP99Ms, 0),
              fixed(systemSecondsPerOrder(s.halfway) * 1000, 2),
            ],
          ]
        : [],
    ),
  };
}

/** Issue 36's targets, and issue 14's 1000/s kept as the stretch goal. */
function capacityTargets(searches: readonly CapacitySearch[]): Target[] {
  // The default shape: one process per role, on kafkajs.
  const named = (design: string, providerMs: number) =>
    searches.find(
      (s) =>
        s.variant.design === design &&
        s.variant.providerMs === providerMs &&
        s.variant.processes === undefined &&
        s.variant.kafkaClient === undefined,
    );
  const library = named('library', 0);
  const fast = capacityOf(library);
  const slow = capacityOf(named('library', 20));
  const guide = capacityOf(named('guide', 0));
  const cpuMs = library?.carried ? systemSecondsPerOrder(library.carried) * 1000 : undefined;
  const halfwayPaid = library?.halfway?.paidP99Ms;
  return [
    {
      name: 'B7 capacity, handler of 0 ms',
      goal: '≥ 8 × the guide as written',
      measured: `${int(fast)}/s, ${guide > 0 ? fixed(fast / guide, 1) : 'n/a'} × the guide (${int(guide)}/s)`,
      met: guide > 0 && fast >= 8 * guide,
    },
    {
      name: 'B7 capacity, 20 ms provider call',
      goal: 'within 10 % of the 0 ms handler',
      measured: `${int(slow)}/s, ${fast > 0 ? fixed(slow / fast, 2) : 'n/a'} × the 0 ms handler`,
      met: fast > 0 && slow >= 0.9 * fast,
    },
    {
      name: 'B7 system CPU per settled order at capacity',
      goal: '≤ 3.0 ms',
      measured: cpuMs === undefined ? 'n/a' : `${fixed(cpuMs, 2)} ms`,
      met: cpuMs !== undefined && cpuMs <= 3,
    },
    {
      name: 'B7 p99 commit → PAID at half of capacity',
      goal: '≤ 500 ms',
      measured: halfwayPaid === undefined ? 'n/a' : `${fixed(halfwayPaid, 0)} ms`,
      met: halfwayPaid !== undefined && halfwayPaid <= 500,
    },
    {
      name: 'B7 capacity, stretch',
      goal: '≥ 1000 orders/s',
      measured: `${int(fast)}/s`,
      met: fast >= 1000,
    },
  ];
}

export function capacitySection(searches: readonly CapacitySearch[], seconds: number): Section {
  return {
    id: 'B7',
    title: 'End-to-end capacity of the whole system',
    tables: [
      capacityTable(searches),
      cpuTable({
        caption: 'Where the CPU went at each system’s capacity (CPU-ms per settled order)',
        first: 'system',
        groups: [...SYSTEM_GROUPS, 'bench'],
        measure: 'ms/order',
        unit: 1000,
        variants: searches.flatMap((s) => {
          const step = shownStep(s);
          return step
            ? [{ name: shownName(s), runs: [{ cpu: step.cpu, work: step.accepted }] }]
            : [];
        }),
      }),
      boundTable(searches),
      halfwayTable(searches),
    ],
    notes: [
      `Every role its own process, as \`pnpm dev\` runs them (unless the system's name says one process per service), with PostgreSQL and Kafka on the same machine. Each rate is offered open-loop for ${seconds} s. A rate is carried when no request fails, p99 commit → handled by payment-service ≤ ${capacityLimits.handledP99Ms} ms, p99 commit → order PAID ≤ ${capacityLimits.paidP99Ms} ms, the orders still in the pipeline do not grow over the step's second half, and everything drains afterwards.`,
      "The guide as written: its relay (every 500 ms, 100 rows sent one by one) in both services and its inbox processor (every 200 ms, 100 rows one by one, the provider call inside each row's transaction), run inside the bench process (their CPU is in `bench`); the api and the consumers are the library's.",
    ],
    targets: capacityTargets(searches),
  };
}
