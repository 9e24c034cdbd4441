import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import type { Table } from './report.ts';
import { percentile } from './stats.ts';

/**
 * Where the CPU went while a measured run was going: the machine has only two cores, so a
 * rate is often "what fits into 2 CPU-seconds per second", and this says who spent them.
 * Linux /proc only; read before and after, so nothing runs in between.
 */
export interface CpuUse {
  readonly wallSeconds: number;
  /** CPU-seconds the whole machine was busy (every core, every process, also other users'). */
  readonly machineSeconds: number;
  /** CPU-seconds per named process group, e.g. { bench: 1.6, postgres: 2.0, kafka: 0.4 }. */
  readonly byName: Readonly<Record<string, number>>;
  /** machineSeconds − the named ones: what else ran on the machine meanwhile. */
  readonly otherSeconds: number;
}

/** Clock ticks per second of /proc's counters (USER_HZ, 100 on Linux). */
export const TICKS = 100;

/** Busy ticks of all cores (user, nice, system, irq, softirq, steal). */
function machineTicks(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.split(/\s+/).slice(1) ?? [];
  const [user, nice, system, , , irq, softirq, steal] = fields.map(Number);
  return (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
}

export interface ProcStat {
  readonly ppid: number;
  /** utime + stime of the process itself (all its threads). */
  readonly own: number;
  /** cutime + cstime: what its children used that it has already reaped. */
  readonly reaped: number;
}

/** A process's CPU counters, or undefined when it is gone. */
export function procStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses; the fields start after the last ')'.
    const fields = text
      .slice(text.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    return {
      ppid: fields[1] ?? 0,
      own: (fields[11] ?? 0) + (fields[12] ?? 0),
      reaped: (fields[13] ?? 0) + (fields[14] ?? 0),
    };
  } catch {
    return undefined;
  }
}

/** Every process's counters and who its children are, read once. */
interface Snapshot {
  readonly stats: ReadonlyMap<number, ProcStat>;
  readonly children: ReadonlyMap<number, readonly number[]>;
}

function snapshot(): Snapshot {
  const stats = new Map<number, ProcStat>();
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const stat = procStat(pid);
    if (stat === undefined) continue;
    stats.set(pid, stat);
    const siblings = children.get(stat.ppid) ?? [];
    siblings.push(pid);
    children.set(stat.ppid, siblings);
  }
  return { stats, children };
}

/**
 * Ticks of a process tree: the root and its descendants, the exited ones included (a server
 * that forks a process per connection, like PostgreSQL, reaps them into its own counters).
 */
function treeTicks(root: number, { stats, children }: Snapshot): number {
  let total = 0;
  const pending = [root];
  for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
    const stat = stats.get(pid);
    if (stat === undefined) continue;
    // A live process's `reaped` already holds its exited children; live ones are added below.
    total += stat.own + stat.reaped;
    pending.push(...(children.get(pid) ?? []));
  }
  return total;
}

/** The pids of a process tree: `root` and its live descendants (PostgreSQL's backends). */
export function treePids(root: number): number[] {
  const { children } = snapshot();
  const pids: number[] = [];
  const pending = [root];
  for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
    pids.push(pid);
    pending.push(...(children.get(pid) ?? []));
  }
  return pids;
}

/**
 * Starts counting CPU, split by `groups` (name → root pid; a group is the process tree), and
 * this process as `bench`; `stop()` returns what was used since.
 */
export function startCpuMeter(groups: Readonly<Record<string, number | undefined>>): {
  stop(): CpuUse;
} {
  const named = Object.entries(groups).filter((e): e is [string, number] => e[1] !== undefined);
  const start = snapshot();
  const before = {
    machine: machineTicks(),
    groups: named.map(([, pid]) => treeTicks(pid, start)),
    bench: process.cpuUsage(),
    at: performance.now(),
  };
  return {
    stop() {
      const benchUse = process.cpuUsage(before.bench);
      const byName: Record<string, number> = { bench: (benchUse.user + benchUse.system) / 1e6 };
      const after = snapshot();
      named.forEach(([name, pid], i) => {
        byName[name] = (treeTicks(pid, after) - (before.groups[i] ?? 0)) / TICKS;
      });
      const machineSeconds = (machineTicks() - before.machine) / TICKS;
      const namedSeconds = Object.values(byName).reduce((sum, v) => sum + v, 0);
      return {
        wallSeconds: (performance.now() - before.at) / 1000,
        machineSeconds,
        byName,
        otherSeconds: Math.max(0, machineSeconds - namedSeconds),
      };
    },
  };
}

/** Runs `work` and reports the CPU it cost (see `startCpuMeter`). */
export async function measureCpu<T>(
  groups: Readonly<Record<string, number | undefined>>,
  work: () => Promise<T>,
): Promise<{ result: T; cpu: CpuUse }> {
  const meter = startCpuMeter(groups);
  const result = await work();
  return { result, cpu: meter.stop() };
}

/** Runs `work` (which returns how much it did: events, requests) and takes the CPU it cost. */
export async function measureCpuRun(
  groups: Readonly<Record<string, number | undefined>>,
  work: () => Promise<number>,
): Promise<CpuRun> {
  const { result, cpu } = await measureCpu(groups, work);
  return { cpu, work: result };
}

/** How many cores the machine has (the ceiling of machineSeconds / wallSeconds). */
export const coreCount = cpus().length;

/** The server processes every scenario shares: PostgreSQL (with its backends) and Kafka. */
export function serverGroups(stack: {
  pid(component: string): number | undefined;
}): Record<string, number | undefined> {
  return { postgres: stack.pid('postgres'), kafka: stack.pid('kafka') };
}

/** One measured run: its CPU and how much work it did (events, requests...). */
export interface CpuRun {
  readonly cpu: CpuUse;
  readonly work: number;
}

/**
 * A "where the CPU went" table: one row per variant with the CPU-seconds per `unit` of work
 * in each group (median over its runs), the rest of the machine, the whole machine, and how
 * busy it was (100 % = every core). `measure` names the figures, e.g. "CPU-s per 100k".
 */
export function cpuTable(spec: {
  readonly caption: string;
  readonly first: string;
  readonly groups: readonly string[];
  readonly measure: string;
  readonly unit: number;
  readonly variants: readonly { readonly name: string; readonly runs: readonly CpuRun[] }[];
}): Table {
  const { groups, measure, unit } = spec;
  const median = (values: number[]) => percentile(values, 50);
  return {
    caption: spec.caption,
    headers: [
      spec.first,
      ...groups.map((group) => `${group} ${measure}`),
      `other ${measure}`,
      `machine ${measure}`,
      'machine busy',
    ],
    rows: spec.variants.map(({ name, runs }) => {
      const per = (seconds: (cpu: CpuUse) => number) =>
        median(runs.map((run) => (seconds(run.cpu) * unit) / run.work)).toFixed(2);
      const busy = median(
        runs.map((run) => run.cpu.machineSeconds / run.cpu.wallSeconds / coreCount),
      );
      return [
        name,
        ...groups.map((group) => per((cpu) => cpu.byName[group] ?? 0)),
        per((cpu) => cpu.otherSeconds),
        per((cpu) => cpu.machineSeconds),
        `${(busy * 100).toFixed(0)} %`,
      ];
    }),
  };
}
