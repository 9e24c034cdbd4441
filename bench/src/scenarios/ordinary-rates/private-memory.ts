import { readFileSync } from 'node:fs';
import { treePids } from '../../cpu.ts';

/**
 * Private memory of one process, bytes: the pages only it maps (`Private_Clean` +
 * `Private_Dirty` of `/proc/<pid>/smaps_rollup`). Unlike RSS it leaves out what is shared
 * (PostgreSQL's shared buffers, the node binary's code), so a process that leaks shows here.
 */
function privateBytesOf(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    let kib = 0;
    for (const match of text.matchAll(/^Private_(?:Clean|Dirty):\s+(\d+) kB$/gm)) {
      kib += Number(match[1]);
    }
    return kib * 1024;
  } catch {
    // The process ended between listing and reading (a PostgreSQL backend): it holds nothing.
    return 0;
  }
}

/** Private memory of each process tree (name → root pid), bytes. */
export function privateMemory(
  groups: Readonly<Record<string, number | undefined>>,
): Record<string, number> {
  const bytes: Record<string, number> = {};
  for (const [name, root] of Object.entries(groups)) {
    if (root === undefined) continue;
    bytes[name] = treePids(root).reduce((sum, pid) => sum + privateBytesOf(pid), 0);
  }
  return bytes;
}
