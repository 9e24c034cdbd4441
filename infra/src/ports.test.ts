import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findFreePort } from './ports.ts';

const folders: string[] = [];
function reservations(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'port-reservations-'));
  folders.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('findFreePort', () => {
  // Kafka's two listeners are picked one after the other, before either binds: the same
  // random draw must not give both the same port.
  it('never hands out one port twice while it is reserved, even when the draw repeats', async () => {
    const dir = reservations();
    const sameDraw = () => 0.5;
    const first = await findFreePort({ random: sameDraw, reservations: dir });
    await expect(findFreePort({ random: sameDraw, reservations: dir })).rejects.toThrow(
      /no free port/,
    );
    const other = await findFreePort({ reservations: dir });
    expect(other).not.toBe(first);
  });

  it('gives distinct ports to many callers at once', async () => {
    const dir = reservations();
    const ports = await Promise.all(
      Array.from({ length: 40 }, () => findFreePort({ reservations: dir })),
    );
    expect(new Set(ports).size).toBe(ports.length);
  });
});
