import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { withFolderLock } from './folder-lock.ts';

const lockModule = pathToFileURL(path.join(import.meta.dirname, 'folder-lock.ts')).href;

/** A process that takes the lock, writes enter/leave lines around 300 ms of work, and exits. */
function holder(lockDir: string, journal: string, name: string): Promise<number | null> {
  const script = `
    import { appendFileSync } from 'node:fs';
    const { withFolderLock } = await import(${JSON.stringify(lockModule)});
    withFolderLock(${JSON.stringify(lockDir)}, { what: 'the test', timeoutMs: 30000, intervalMs: 20 }, () => {
      appendFileSync(${JSON.stringify(journal)}, 'enter ${name}\\n');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
      appendFileSync(${JSON.stringify(journal)}, 'leave ${name}\\n');
    });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: 'inherit',
  });
  return new Promise((resolve) => child.once('exit', resolve));
}

describe('withFolderLock', () => {
  it('lets one process at a time in, whichever asks first', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'folder-lock-'));
    const lockDir = path.join(dir, 'nested', '.lock');
    const journal = path.join(dir, 'journal');
    writeFileSync(journal, '');

    const codes = await Promise.all(['a', 'b', 'c'].map((name) => holder(lockDir, journal, name)));

    expect(codes).toEqual([0, 0, 0]);
    const lines = readFileSync(journal, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(6);
    // Never two inside at once: each enter is followed by the same process's leave.
    for (let i = 0; i < lines.length; i += 2) {
      expect(lines[i + 1]).toBe(lines[i]?.replace('enter', 'leave'));
    }
  });

  it('takes over a lock whose process died, and waits out one whose process lives', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'folder-lock-'));
    const lockDir = path.join(dir, '.lock');
    mkdirSync(lockDir);
    // No process has this pid: pids are far below it on Linux.
    writeFileSync(path.join(lockDir, 'pid'), String(2 ** 30));
    expect(withFolderLock(lockDir, { what: 'the test', timeoutMs: 1000 }, () => 'ran')).toBe('ran');

    mkdirSync(lockDir);
    writeFileSync(path.join(lockDir, 'pid'), String(process.pid));
    expect(() =>
      withFolderLock(lockDir, { what: 'the test', timeoutMs: 300, intervalMs: 50 }, () => 'ran'),
    ).toThrow(/waited 300 ms for another process to finish the test/);
  });
});
