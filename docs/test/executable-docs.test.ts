/**
 * The documents a class follows, run as written: every ```sh block of docs/workshop.md (the
 * five exercise scripts included) and of the runbook's "Practice on the dev stack" section,
 * literally, in order, from the repository root, against a real system: the test's
 * PostgreSQL + Kafka with both services added as stack components (free ports), which is
 * what `./pnpm dev` builds on the dev ports. `STACK_NAME` points `./pnpm stack`, `./pnpm demo`
 * and `./wk` at it. Each "You should see" of the document is checked against what its block
 * printed; the conventions are in `support/doc-blocks.ts`. A document that drifts from the
 * code fails here.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { findFreePort, findRepoRoot, Stack } from '@outbox-inbox/infra';
import { componentNames, startServices } from '@outbox-inbox/launcher';
import { beforeAll, describe, expect, inject, it } from 'vitest';
// Types `inject('stackName')`, provided by the infra package's global setup.
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import {
  commandBlocks,
  blocksOf,
  printed,
  sessionScript,
  type CommandBlock,
} from './support/doc-blocks.ts';

const root = findRepoRoot();
let stack: Stack;

function bash(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', args, {
      cwd: root,
      env: { ...process.env, ...env, STACK_NAME: stack.name, WK_TIMEOUT_S: '120' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('close', (code) => resolve({ code, output }));
  });
}

function describeBlock(file: string, block: CommandBlock): string {
  return `${file}:${block.line} (${block.section})\n${block.commands}`;
}

/**
 * Runs the blocks of `file` (those under `section` only, when given) in one bash session and
 * returns the problems found: the block that failed, and each expected text not printed.
 */
async function runDocument(file: string, section?: string): Promise<string[]> {
  const blocks = commandBlocks(readFileSync(path.join(root, file), 'utf8'), section);
  const runnable = blocks.filter((block) => block.notRun === undefined);
  // A document (or a section) that lost its blocks would otherwise pass by checking nothing.
  expect(runnable.length, `${file}: no runnable sh block`).toBeGreaterThan(0);
  const { code, output } = await bash(['-c', sessionScript(runnable)]);
  const ran = blocksOf(output, runnable.length);
  const outputs = ran.map((block) => block.output);
  // Where a document's minutes go, in the test's log: the suite's timing table stops at files.
  console.log(
    ran
      .map(({ seconds }, n) => {
        const block = runnable[n];
        const took = seconds === undefined ? '(did not end)' : `${seconds.toFixed(1)} s`;
        return `${file}:${block?.line ?? '?'} (${block?.section ?? '?'}): ${took}`;
      })
      .join('\n'),
  );
  const problems: string[] = [];
  if (code !== 0) {
    const failed = runnable[outputs.length - 1];
    problems.push(
      `exit code ${String(code)} in ${failed ? describeBlock(file, failed) : file}\n` +
        `--- its output:\n${outputs.at(-1) ?? output}`,
    );
  }
  runnable.forEach((block, n) => {
    const seen = outputs[n];
    if (seen === undefined) return;
    const missing = block.expected.filter((text) => !printed(seen, text));
    if (missing.length > 0)
      problems.push(
        `${describeBlock(file, block)}\n--- promised but not printed: ${missing
          .map((text) => `\`${text}\``)
          .join(', ')}\n--- its output:\n${seen}`,
      );
  });
  return problems;
}

beforeAll(async () => {
  stack = Stack.open(inject('stackName'));
  const ports: Record<string, number> = {};
  for (const name of componentNames) ports[name] = await findFreePort();
  await startServices(stack, {
    ports,
    settings: { RELAY_POLL_INTERVAL_MS: '200', LOG_LEVEL: 'warn' },
  });
});

describe('the documents, run as written', () => {
  // Exercise 3's two runs of e2e scenario 2 are the mutation stage's (see the comment above
  // their blocks); the test below keeps its patch applying. Exercise 5 adds Kafka Connect to this stack and moves order-relay to CDC and back.
  it('docs/workshop.md: every command block, the exercises included (but for the mutations of exercise 3)', async () => {
    expect(await runDocument('docs/workshop.md')).toEqual([]);
  }, 1_800_000);

  it('docs/runbook.md: the practice recipes (parked, dead, FAILED, retention)', async () => {
    expect(await runDocument('docs/runbook.md', 'Practice on the dev stack')).toEqual([]);
  }, 600_000);

  it("exercise 3's idempotency break applies to the source, with and without its migration hunk", async () => {
    const { code, output } = await bash(['docs/workshop/3-break-idempotency.sh'], {
      WORKSHOP_PATCH_CHECK_ONLY: '1',
    });
    expect(code, output).toBe(0);
    expect(output).toMatch(/the patch applies/);
  });
});
