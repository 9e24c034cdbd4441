import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { Stack, findRepoRoot } from '../src/index.ts';

// The run's own local stack plays a server someone else runs, reached with a password (which
// its trust authentication ignores): what the external provider is given in production.
const source = Stack.open(inject('stackName'));
const name = `redacted-${process.pid}`;
// Letters and digits only, so it appears in a URL as it is, and a leak is found by a plain search.
const password = `pw${randomBytes(12).toString('hex')}`;

beforeAll(async () => {
  const url = new URL(source.postgresUrl());
  url.password = password;
  await Stack.up({
    name,
    env: {
      ...process.env,
      STACK_PROVIDER: 'external',
      DATABASE_URL: url.toString(),
      KAFKA_BROKERS: source.kafkaBrokers.join(','),
    },
  });
});
afterAll(async () => {
  await Stack.open(name).down();
});

function stackCli(...args: string[]): string {
  const root = findRepoRoot();
  return execFileSync('bash', [path.join(root, 'pnpm'), 'stack', ...args, `--name=${name}`], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

it('stack status prints no password of a connection string, as text or as JSON', () => {
  const text = stackCli('status');
  const json = stackCli('status', '--json');
  expect(text).toContain('postgres');
  const status = JSON.parse(json) as {
    components: { name: string; endpoints: Record<string, string> }[];
  };
  const postgres = status.components.find((component) => component.name === 'postgres');
  expect(postgres?.endpoints['url']).toMatch(/^postgres:\/\/postgres:\*\*\*@/);
  expect(text).toContain('postgres:***@');
  expect(text).not.toContain(password);
  expect(json).not.toContain(password);
});
