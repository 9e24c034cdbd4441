import { readFileSync } from 'node:fs';
import { findFreePort, pollUntil, Stack } from '@outbox-inbox/infra';
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import { orderService } from '@outbox-inbox/order-service';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { followRoleLogs, selectRoles } from '../../src/logs/follow-role-logs.ts';
import { migrateService } from '../../src/system/migrate-service.ts';
import { roleComponent } from '../../src/system/role-component.ts';

const stack = Stack.open(inject('stackName'));
const roles = ['relay', 'retention'] as const;

beforeAll(async () => {
  const databaseUrl = await stack.createDatabase('role_logs_test');
  await migrateService(orderService, databaseUrl, stack.kafkaBrokers);
  // Two real roles, each its own process writing its log file, as `pnpm dev` runs them.
  for (const role of roles) {
    await stack.addProcess(
      roleComponent(
        { name: `order-${role}`, service: orderService, role },
        { port: await findFreePort(), databaseUrl, kafkaBrokers: stack.kafkaBrokers },
      ),
    );
  }
});

afterAll(async () => {
  for (const role of roles) await stack.stop(`order-${role}`);
});

/** Everything `followRoleLogs` writes, as lines. */
function collect(): { lines: () => string[]; write: (text: string) => void } {
  let text = '';
  return {
    lines: () => text.split('\n').filter((line) => line.length > 0),
    write: (more) => (text += more),
  };
}

describe('the roles’ logs, readable (pnpm dev --logs, pnpm logs)', () => {
  it('writes one line per entry: component, time, level, message, fields; never the JSON', async () => {
    const output = collect();
    const logs = followRoleLogs({
      stack,
      only: ['order-relay'],
      from: 'start',
      colorize: false,
      write: output.write,
      intervalMs: 50,
    });
    try {
      expect(logs.components).toEqual(['order-relay']);
      await pollUntil(() => output.lines().some((line) => line.includes('order-service started')), {
        timeoutMs: 10_000,
        description: `the relay's start-up line (so far: ${output.lines().join('\n')})`,
      });
    } finally {
      logs.stop();
    }
    const time = String.raw`\[\d\d:\d\d:\d\d\.\d{3}\]`;
    expect(output.lines()).toContainEqual(
      expect.stringMatching(
        new RegExp(
          String.raw`^order-relay │ ${time} INFO: outbox relay started \{.*"batchSize":\d+`,
        ),
      ),
    );
    for (const line of output.lines()) {
      expect(line).toMatch(new RegExp(`^order-relay │ ${time} (INFO|WARN|ERROR|DEBUG):`));
      expect(line).not.toContain('"level"');
    }
  });

  it('shows only the roles asked for, a service by its prefix, and follows what is written next', async () => {
    const output = collect();
    const logs = followRoleLogs({
      stack,
      only: ['order'],
      from: 'end',
      colorize: false,
      write: output.write,
      intervalMs: 50,
    });
    try {
      expect(logs.components).toEqual(expect.arrayContaining(['order-relay', 'order-retention']));
      expect(logs.components.every((component) => component.startsWith('order-'))).toBe(true);
      // Written after the follow began: a graceful stop logs "shutting down" and "stopped".
      await stack.stop('order-retention');
      await pollUntil(
        () => output.lines().some((line) => /^order-retention\s+│ .* INFO: stopped$/.test(line)),
        {
          timeoutMs: 10_000,
          description: `the retention's last line (so far: ${output.lines().join('\n')})`,
        },
      );
    } finally {
      logs.stop();
    }
    expect(output.lines().filter((line) => line.startsWith('order-relay '))).toEqual([]);
    await stack.start('order-retention');
  });

  it('refuses a role the stack does not have, and names those it has', () => {
    expect(() => selectRoles(['order-relay', 'payment-api'], ['order-rely'])).toThrow(
      'no role "order-rely" in the stack; roles: order-relay, payment-api',
    );
    expect(selectRoles(['order-relay-1', 'order-relay-2', 'payment-api'], ['order-relay'])).toEqual(
      ['order-relay-1', 'order-relay-2'],
    );
  });
});

// stderr goes to the same file: a Node warning at start-up would be a line that is not JSON.
it('a role prints no Node warning: every line of its log is a JSON log entry', () => {
  for (const role of roles) {
    const file = stack.logFile(`order-${role}`) ?? '';
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((line) => !line.startsWith('{"level":'))).toEqual([]);
  }
});
