import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { Stack, stacksHome } from '../src/index.ts';

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every pid whose command line mentions the folder: backends, JVM threads' parents, anything. */
function pidsUsing(folder: string): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes(folder))
    .map((line) => Number(line.trim().split(' ')[0]));
}

describe('two stacks side by side', () => {
  it('run on their own free ports, and down leaves no process behind', async () => {
    const names = [`side-a-${process.pid}`, `side-b-${process.pid}`];
    const stacks = await Promise.all(
      names.map((name) =>
        Stack.up({ name, kafkaHeapMb: 256, env: { ...process.env, STACK_PROVIDER: 'local' } }),
      ),
    );
    const [a, b] = stacks;
    if (!a || !b) throw new Error('two stacks expected');

    expect(a.postgresUrl()).not.toBe(b.postgresUrl());
    expect(a.kafkaBrokers).not.toEqual(b.kafkaBrokers);
    for (const stack of stacks) {
      const client = new pg.Client({ connectionString: stack.postgresUrl() });
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      expect(stack.status().every((component) => component.running)).toBe(true);
    }

    const pids = stacks.flatMap((stack) => stack.status().map((component) => component.pid ?? -1));
    const folders = names.map((name) => path.join(stacksHome(), name));
    await Promise.all(stacks.map((stack) => stack.down()));

    for (const pid of pids) expect(processExists(pid)).toBe(false);
    for (const folder of folders) {
      expect(pidsUsing(folder)).toEqual([]);
      expect(existsSync(folder)).toBe(false);
    }
  });
});
