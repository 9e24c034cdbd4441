/**
 * What `./pnpm test` runs: every check of the repository as a stage, a command in a folder.
 * Stages run side by side, up to `concurrency` at once, longest first: what waits on servers
 * (the scenarios, the mutations) overlaps with what needs the cores (type checks, lint, the
 * packages' tests), which is what two cores allow.
 */
export interface Stage {
  readonly name: string;
  /** Folder, relative to the repository root. */
  readonly cwd: string;
  readonly command: string;
  readonly args: readonly string[];
  /** A vitest run: the runner adds a JSON report, for the timing table's test files. */
  readonly vitest?: boolean;
  /** Resilience scenarios: the timing table lists each of its tests, and they share one report. */
  readonly scenarios?: boolean;
  readonly env?: Readonly<Record<string, string>>;
}

const vitest = (name: string, cwd: string, ...args: string[]): Stage => ({
  name,
  cwd,
  command: 'vitest',
  args: ['run', ...args],
  vitest: true,
});

/**
 * In start order: the runner starts the first `concurrency` stages, then the next whenever one
 * ends. Longest first (the timing table of a run says which those are), so that the short ones
 * fill the end and neither core waits alone for a long one.
 */
/**
 * A part of the resilience suite (e2e/vitest.config.ts says which files): the scenarios take
 * longer than all the rest together, so they run as two stages side by side. Each stage adds
 * its rows to the one report that `./pnpm test` clears at its start.
 */
const scenarios = (name: string, part: string): Stage => ({
  ...vitest(name, 'e2e'),
  scenarios: true,
  env: { E2E_PART: part, E2E_REPORT_APPEND: '1' },
});

export const stages: readonly Stage[] = Object.freeze([
  scenarios('e2e', 'rest'),
  {
    name: 'mutations',
    cwd: '.',
    command: 'node',
    args: ['e2e/mutations/run-mutations.ts'],
  },
  scenarios('e2e on a cluster or with CDC', 'cluster-and-cdc'),
  vitest('outbox', 'packages/outbox'),
  vitest('docs', 'docs'),
  vitest('outbox on platformatic', 'packages/outbox', '--config', 'vitest.platformatic.config.ts'),
  vitest('infra', 'infra'),
  vitest('launcher', 'services/launcher'),
  { name: 'format', cwd: '.', command: 'prettier', args: ['--check', '.'] },
  // The whole workspace in one program and one lint run: the packages' own check-types and
  // lint tasks (turbo) each load the sources they import from the others again.
  { name: 'types', cwd: '.', command: 'tsc', args: ['-p', 'tsconfig.json'] },
  { name: 'lint', cwd: '.', command: 'eslint', args: ['.'] },
  vitest('order-service', 'services/order-service'),
  vitest('payment-service', 'services/payment-service'),
  vitest('service-kit', 'packages/service-kit'),
  vitest('contracts', 'packages/contracts'),
  vitest('examples/minimal', 'examples/minimal'),
  vitest('bench', 'bench'),
]);
