import { coreCount, cpuTable } from '../../cpu.ts';
import type { Section, Table, Target } from '../../report.ts';
import { fixed, int } from '../../stats.ts';
import type { CapacitySearch } from './search-capacity.ts';
import { capacityLimits } from './measure-step.ts';

/** Every process group of the system; `bench` is the load (and, for the guide, its parts). */
const SYSTEM_GROUPS = [
  'order-api',
  'order-relay',
  'order-consumer',
  'payment-consumer',
  'payment-processor',
  'payment-relay',
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

/** CPU-seconds per settled order of the whole system (not the load), and the bound it implies. */
function boundTable(searches: readonly CapacitySearch[]): Table {
  return {
    caption: `The bound the CPU implies: ${coreCount} cores ÷ the system's CPU-seconds per order (the load generator excluded)`,
    headers: ['system', 'system CPU-ms per order', 'bound orders/s', 'capacity / bound'],
    rows: searches.flatMap((s) => {
      const step = shownStep(s);
      if (step === undefined) return [];
      const systemSeconds = SYSTEM_GROUPS.reduce((sum, g) => sum + (step.cpu.byName[g] ?? 0), 0);
      const perOrder = systemSeconds / Math.max(step.accepted, 1);
      const bound = coreCount / perOrder;
      return [[shownName(s), fixed(perOrder * 1000, 2), int(bound), fixed(step.rate / bound, 2)]];
    }),
  };
}

function capacityTargets(searches: readonly CapacitySearch[]): Target[] {
  const named = (design: string, providerMs: number) =>
    searches.find((s) => s.variant.design === design && s.variant.providerMs === providerMs);
  const fast = capacityOf(named('library', 0));
  const slow = capacityOf(named('library', 20));
  const guide = capacityOf(named('guide', 0));
  return [
    {
      name: 'B7 capacity, handler of 0 ms',
      goal: '≥ 1000 orders/s and ≥ 5 × the guide as written',
      measured: `${int(fast)}/s, ${guide > 0 ? fixed(fast / guide, 1) : 'n/a'} × the guide (${int(guide)}/s)`,
      met: fast >= 1000 && fast >= 5 * guide,
    },
    {
      name: 'B7 capacity, 20 ms provider call',
      goal: '≥ 500 orders/s',
      measured: `${int(slow)}/s`,
      met: slow >= 500,
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
    ],
    notes: [
      `Every role its own process, as \`pnpm dev\` runs them, with PostgreSQL and Kafka on the same machine. Each rate is offered open-loop for ${seconds} s. A rate is carried when no request fails, p99 commit → handled by payment-service ≤ ${capacityLimits.handledP99Ms} ms, p99 commit → order PAID ≤ ${capacityLimits.paidP99Ms} ms, the orders still in the pipeline do not grow over the step's second half, and everything drains afterwards.`,
      "The guide as written: its relay (every 500 ms, 100 rows sent one by one) in both services and its inbox processor (every 200 ms, 100 rows one by one, the provider call inside each row's transaction), run inside the bench process (their CPU is in `bench`); the api and the consumers are the library's.",
    ],
    targets: capacityTargets(searches),
  };
}
