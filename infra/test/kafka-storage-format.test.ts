import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defineKafka, newClusterId } from '../src/components/kafka.ts';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'kafka-format-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs the component's own format step, as the local driver does before the first start. */
function format(clusterId: string): { status: number | null; output: string; meta: string } {
  const dir = path.join(scratch, clusterId.replaceAll(/[^a-z0-9]/gi, '_'));
  const record = defineKafka({ dir, port: 1, controllerPort: 2, clusterId });
  const prepare = record.prepare;
  if (!prepare || !record.dataDir) throw new Error('the Kafka component has no format step');
  const result = spawnSync(prepare.command, prepare.args, { encoding: 'utf8' });
  let meta = '';
  try {
    meta = readFileSync(path.join(record.dataDir, 'meta.properties'), 'utf8');
  } catch {
    // Not formatted: the assertion below shows the tool's output.
  }
  return { status: result.status, output: `${result.stdout}${result.stderr}`, meta };
}

describe('Kafka storage format', () => {
  // One random id in 64 starts with "-"; the storage tool must not read it as an option.
  it('formats a real data folder whose cluster id starts with "-"', () => {
    const clusterId = `-${newClusterId().slice(1)}`;
    const { status, output, meta } = format(clusterId);
    expect(output).not.toMatch(/expected one argument/);
    expect(status).toBe(0);
    expect(meta).toContain(`cluster.id=${clusterId}`);
  });

  it('draws ids of 22 base64url characters', () => {
    for (let n = 0; n < 200; n++) expect(newClusterId()).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});
