import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findRepoRoot, type Stack } from '@outbox-inbox/infra';
import { applyEdits, EditDoesNotApply } from './anchored-edits.ts';
import type { Mutation } from './catalog.ts';

export interface MutationOutcome {
  readonly name: string;
  readonly breaks: string;
  /**
   * killed: a test failed an assertion (saying the mutation's `evidence`, when it has one);
   * survived: every test passed; caught for another reason: a test failed without that evidence.
   */
  readonly verdict:
    'killed' | 'survived' | 'caught for another reason' | 'does not apply' | 'no test ran';
  /** `file > test title` of the first failed test. */
  readonly caughtBy: string | undefined;
  /** The first line of its failure: usually the violated invariant. */
  readonly evidence: string | undefined;
  readonly seconds: number;
}

interface VitestJson {
  readonly numTotalTests: number;
  readonly testResults: readonly {
    readonly name: string;
    readonly assertionResults: readonly {
      readonly fullName: string;
      readonly status: string;
      readonly failureMessages: readonly string[];
    }[];
  }[];
}

const timeoutMs = 20 * 60_000;

function run(command: string, args: readonly string[], cwd: string, env = process.env) {
  return spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: timeoutMs });
}

/** The working tree as it is (tracked and untracked, not ignored), copied into `target`. */
function copyWorkingTree(root: string, target: string): void {
  const result = spawnSync(
    'bash',
    [
      '-c',
      // A tracked file deleted in the working tree (a report being rewritten) is left out.
      'git ls-files -z -co --exclude-standard | tar --null --ignore-failed-read -T - -cf - | tar -xf - -C "$0"',
      target,
    ],
    { cwd: root, encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(`copying the working tree failed: ${result.stderr}`);
}

/** The folder of the package that holds every test file the mutation names. */
function packageOf(mutation: Mutation): string {
  const dirs = new Set(
    mutation.mustFailIn.map((file) => {
      let dir = path.dirname(file);
      while (dir !== '.' && !existsSync(path.join(findRepoRoot(), dir, 'package.json')))
        dir = path.dirname(dir);
      return dir;
    }),
  );
  const [dir, ...others] = dirs;
  if (dir === undefined || others.length > 0)
    throw new Error(`mutation ${mutation.name}: its tests must live in exactly one package`);
  return dir;
}

interface Failure {
  readonly caughtBy: string;
  readonly evidence: string;
  /** The whole failure message, colours removed. */
  readonly message: string;
}

function firstFailure(report: VitestJson): Failure | undefined {
  for (const file of report.testResults) {
    for (const test of file.assertionResults) {
      if (test.status !== 'failed') continue;
      // eslint-disable-next-line no-control-regex
      const message = (test.failureMessages[0] ?? '').replaceAll(/\x1b\[[0-9;]*m/g, '');
      const lines = message.split('\n');
      // expectInvariantsHeld puts the first violations right after this line.
      const broken = lines.findIndex((line) => line.includes('invariant(s) broken:'));
      const evidence = broken >= 0 ? `${lines[broken]} ${lines[broken + 1]}` : lines[0];
      return {
        caughtBy: `${path.basename(file.name)} > ${test.fullName}`,
        evidence: (evidence ?? '').trim().slice(0, 300),
        message,
      };
    }
  }
  return undefined;
}

/** Applies the mutation to the copy: undefined when it applied, else why not. */
function applyMutation(mutation: Mutation, root: string, copy: string): string | undefined {
  if (mutation.edits) {
    try {
      applyEdits(copy, mutation.edits, { write: true });
      return undefined;
    } catch (error) {
      if (error instanceof EditDoesNotApply) return error.message;
      throw error;
    }
  }
  const excluded = (mutation.excludeFromPatch ?? []).map((file) => `--exclude=${file}`);
  const applied = run('git', ['apply', ...excluded, path.join(root, mutation.patch)], copy);
  return applied.status === 0
    ? undefined
    : (applied.stderr.trim().split('\n')[0] ?? 'git apply failed');
}

/** The environment of the mutated copy's tests: `servers` instead of their own, Kafka's jars. */
function testEnvironment(root: string, servers: Stack): NodeJS.ProcessEnv {
  const kafkaLibs = path.join(root, 'infra', 'kafka', 'target');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...(existsSync(path.join(kafkaLibs, 'libs')) ? { KAFKA_HOME: kafkaLibs } : {}),
    // The tests' global set-ups take these servers as external ones instead of starting
    // their own (infra's and the e2e suite's alike).
    STACK_PROVIDER: 'external',
    STACK_POSTGRES_URL: servers.postgresUrl(),
    KAFKA_BROKERS: servers.kafkaBrokers.join(','),
  };
  delete env['DATABASE_URL'];
  return env;
}

/**
 * Copies the working tree, applies the mutation, installs the packages offline and
 * runs the tests that must catch it. Never touches the working tree itself.
 */
export async function runMutation(
  mutation: Mutation,
  options: { keep: boolean; servers: Stack },
): Promise<MutationOutcome> {
  const started = Date.now();
  const root = findRepoRoot();
  const copy = mkdtempSync(path.join(os.tmpdir(), `mutation-${mutation.name}-`));
  const outcome = (
    verdict: MutationOutcome['verdict'],
    found?: Pick<Failure, 'caughtBy' | 'evidence'>,
  ) => ({
    name: mutation.name,
    breaks: mutation.breaks,
    verdict,
    caughtBy: found?.caughtBy,
    evidence: found?.evidence,
    seconds: Math.round((Date.now() - started) / 1000),
  });
  try {
    copyWorkingTree(root, copy);
    const notApplied = applyMutation(mutation, root, copy);
    if (notApplied !== undefined)
      return outcome('does not apply', { caughtBy: '', evidence: notApplied });
    const installed = run('pnpm', ['install', '--offline', '--frozen-lockfile'], copy);
    if (installed.status !== 0) throw new Error(`pnpm install failed: ${installed.stderr}`);
    const pkg = packageOf(mutation);
    const jsonFile = path.join(copy, 'mutation-result.json');
    const env = testEnvironment(root, options.servers);
    run(
      path.join(copy, pkg, 'node_modules', '.bin', 'vitest'),
      [
        'run',
        ...mutation.mustFailIn.map((file) => path.relative(pkg, file)),
        // The first failed test kills the mutation: the rest would only cost time.
        '--bail=1',
        '--reporter=json',
        `--outputFile=${jsonFile}`,
      ],
      path.join(copy, pkg),
      env,
    );
    if (!existsSync(jsonFile)) return outcome('no test ran');
    const report = JSON.parse(readFileSync(jsonFile, 'utf8')) as VitestJson;
    if (report.numTotalTests === 0) return outcome('no test ran');
    const found = firstFailure(report);
    if (found === undefined) return outcome('survived');
    if (mutation.evidence && !mutation.evidence.test(found.message))
      return outcome('caught for another reason', found);
    return outcome('killed', found);
  } finally {
    if (!options.keep) rmSync(copy, { recursive: true, force: true });
  }
}
