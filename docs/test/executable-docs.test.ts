/**
 * Every exercise of docs/workshop.md runs, as written, against a real system: the test's
 * PostgreSQL + Kafka with both services added as stack components (free ports), which is what
 * `pnpm dev` builds on the dev ports. Each script asserts its own expected observation and
 * exits non-zero when it does not see it.
 */
import { spawn } from 'node:child_process';
import { findFreePort, findRepoRoot, Stack } from '@outbox-inbox/infra';
import { componentNames, startServices } from '@outbox-inbox/launcher';
import { beforeAll, describe, expect, inject, it } from 'vitest';
// Types `inject('stackName')`, provided by the infra package's global setup.
import type {} from '@outbox-inbox/infra/vitest-global-setup';

const root = findRepoRoot();
let stack: Stack;

function runExercise(
  script: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [`docs/workshop/${script}`], {
      cwd: root,
      env: { ...process.env, ...env, STACK_NAME: stack.name, WK_TIMEOUT_S: '90' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('close', (code) => resolve({ code, output }));
  });
}

async function passes(script: string, env?: Record<string, string>): Promise<string> {
  const { code, output } = await runExercise(script, env);
  // The transcript is the failure message: it shows which step did not see what it expected.
  expect(code, output).toBe(0);
  return output;
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

describe('docs/workshop.md exercises', () => {
  it('1: Kafka down, the backlog grows and drains', async () => {
    const output = await passes('1-kafka-down.sh');
    expect(output).toMatch(/outbox_unpublished_events >= 20: yes/);
    expect(output).toMatch(/outbox_unpublished_events == 0: yes/);
    expect(output).toMatch(/20 order\(s\) PAID/);
  });

  it('2: a relay killed between send and commit leaves a duplicate, absorbed by the inbox', async () => {
    const output = await passes('2-relay-crash.sh');
    expect(output).toMatch(/relay exit status: 137/);
    expect(output).toMatch(/delivered 2x/);
  });

  it('3: the idempotency break still applies to the source', async () => {
    const output = await passes('3-break-idempotency.sh', { WORKSHOP_PATCH_CHECK_ONLY: '1' });
    expect(output).toMatch(/the patch applies/);
  });

  it('4: the naive after-commit writer loses events the outbox delivers', async () => {
    const output = await passes('4-naive-writer.sh');
    expect(output).toMatch(/5 send\(s\) failed after commit/);
    expect(output).toMatch(/5 orders committed, 5 without an event \(lost\)/);
  });
});
