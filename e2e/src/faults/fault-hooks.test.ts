import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { readInjectedFaults } from './injected-faults.ts';

const faultHooksUrl = pathToFileURL(path.join(import.meta.dirname, 'fault-hooks.ts')).href;
let dir: string | undefined;

afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

it('a self-kill records its pid and last counters, and no other unit of work passes a point meanwhile', () => {
  dir = mkdtempSync(path.join(tmpdir(), 'e2e-last-words-'));
  const logFile = path.join(dir, 'injected-faults.jsonl');
  const script = path.join(dir, 'dies.mjs');
  // The first batch strikes and reads its counters slowly; a second batch reaches a point that
  // never strikes by chance (0) while the first is dying: it must not get past it.
  writeFileSync(
    script,
    `import { faultHooks } from ${JSON.stringify(faultHooksUrl)};
const hooks = faultHooks({ 'inbox-before-offset-commit': 1, 'inbox-before-store': 0 }, {
  component: 'payment-consumer',
  logFile: ${JSON.stringify(logFile)},
  lastCounters: () => new Promise((resolve) => setTimeout(() => resolve({
    inbox_duplicates_dropped_total: 7, processed_event_duplicates_total: 2,
  }), 200)),
});
const batch = { topic: 'order.events', partition: 0, eventIds: [] };
const dying = hooks.inboxWriter.beforeCommitOffset(batch);
setTimeout(async () => {
  await hooks.inboxWriter.beforeStore(batch);
  console.log('second batch passed');
}, 20);
await dying;
console.log('survived');
`,
  );
  const child = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 30_000 });

  expect(child.signal).toBe('SIGKILL');
  expect(child.stdout).toBe('');
  expect(readInjectedFaults(logFile)).toEqual([
    expect.objectContaining({
      component: 'payment-consumer',
      point: 'inbox-before-offset-commit',
      pid: child.pid,
      counters: { inbox_duplicates_dropped_total: 7, processed_event_duplicates_total: 2 },
    }),
  ]);
});
