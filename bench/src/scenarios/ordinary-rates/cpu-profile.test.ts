import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findRepoRoot } from '@outbox-inbox/infra';
import { afterEach, expect, it } from 'vitest';
import { summarizeProfile } from './cpu-profile.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const frame = (id: number, functionName: string, url: string, lineNumber = 0) => ({
  id,
  callFrame: { functionName, url, lineNumber },
});

/** A profile of 1 s start-up in `loadModule`, then 2 s of load: pg 1 s, ours 0.5 s, idle 0.5 s. */
function writeProfile(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'profile-test-'));
  dirs.push(dir);
  const ours = `file://${findRepoRoot()}/packages/outbox/src/relay/claim-batch.ts`;
  const nodes = [
    frame(1, '(root)', ''),
    frame(2, '(idle)', ''),
    frame(3, 'loadModule', 'node:internal/modules/esm/loader'),
    frame(4, 'parseRow', '/x/node_modules/.pnpm/pg@8/node_modules/pg/lib/result.js', 40),
    frame(5, 'claimHeads', ours, 9),
  ];
  // 100 ms per sample: 10 of start-up, then 10 pg, 5 ours, 5 idle (interleaved).
  const samples = [
    ...Array<number>(10).fill(3),
    ...Array.from({ length: 20 }, (_, i) => (i % 4 === 3 ? 2 : i % 4 === 2 ? 5 : 4)),
  ];
  const timeDeltas = samples.map(() => 100_000);
  const profile = { nodes, samples, timeDeltas, startTime: 0, endTime: 3_000_000 };
  writeFileSync(path.join(dir, 'CPU.1.cpuprofile'), JSON.stringify(profile));
  return dir;
}

it('sums self time per frame and per package over the last seconds only, idle left out', () => {
  const summary = summarizeProfile('order-relay', writeProfile(), { fromSecondsBeforeEnd: 2 });
  expect(summary.busyMs).toBeCloseTo(1500);
  expect(summary.frames).toEqual([
    { frame: 'parseRow pg/lib/result.js:41', ms: expect.closeTo(1000) },
    { frame: 'claimHeads packages/outbox/src/relay/claim-batch.ts:10', ms: expect.closeTo(500) },
  ]);
  expect(summary.areas).toEqual([
    { area: 'pg', ms: expect.closeTo(1000) },
    { area: 'packages/outbox', ms: expect.closeTo(500) },
  ]);
});

it('counts the start-up when the span covers it', () => {
  const summary = summarizeProfile('order-relay', writeProfile(), { fromSecondsBeforeEnd: 3 });
  expect(summary.busyMs).toBeCloseTo(2500);
  expect(summary.areas.map((a) => a.area)).toContain('node');
});

it('takes only the span asked for: the start-up alone', () => {
  const summary = summarizeProfile('order-relay', writeProfile(), {
    fromSecondsBeforeEnd: 3,
    toSecondsBeforeEnd: 2,
  });
  expect(summary.busyMs).toBeCloseTo(1000);
  expect(summary.areas).toEqual([{ area: 'node', ms: expect.closeTo(1000) }]);
});
