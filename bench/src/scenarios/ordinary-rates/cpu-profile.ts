import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { findRepoRoot } from '@outbox-inbox/infra';
import { roleCommand, type Command } from '@outbox-inbox/service-kit';
import type { systemRoles } from '../../role-system/start-role-system.ts';

type SystemRole = (typeof systemRoles)[number];

/** The role's own program under V8's sampling profiler, written to `<dir>/<role>/` at exit. */
export function profiledCommand(dir: string): (role: SystemRole) => Command {
  return (role) => {
    const command = roleCommand(role.service, role.role);
    return {
      ...command,
      args: ['--cpu-prof', `--cpu-prof-dir=${path.join(dir, role.name)}`, ...command.args],
    };
  };
}

/** The parts of a `.cpuprofile` (Chrome DevTools' format, as `node --cpu-prof` writes it) read here. */
interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: {
      readonly functionName: string;
      readonly url: string;
      readonly lineNumber: number;
    };
  }[];
  readonly samples: readonly number[];
  /** Microseconds since the previous sample (the first: since `startTime`). */
  readonly timeDeltas: readonly number[];
  readonly endTime: number;
}

/** Where a role's busy time went: its busiest frames (self time) and by package. */
export interface ProfileSummary {
  readonly role: string;
  /** Sampled time not idle, ms. */
  readonly busyMs: number;
  readonly frames: readonly { readonly frame: string; readonly ms: number }[];
  readonly areas: readonly { readonly area: string; readonly ms: number }[];
}

const root = `${findRepoRoot()}/`;

const MODULES = '/node_modules/';

/** `pg/lib/client.js`, `node:internal/…`, `packages/outbox/src/…`: a frame's file, short. */
function shortFile(url: string): string {
  const modules = url.lastIndexOf(MODULES);
  if (modules >= 0) return url.slice(modules + MODULES.length);
  return url.replace(/^file:\/\//, '').replace(root, '');
}

/** The package a frame belongs to: an npm package, `node`, a folder of this repository, or V8's own. */
function areaOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node';
  const [first = '', second = ''] = shortFile(url).split('/');
  // A scoped package (`@opentelemetry/api`) or a folder of this repository (`packages/outbox`).
  return first.startsWith('@') || !url.includes(MODULES) ? `${first}/${second}` : first;
}

function add(map: Map<string, number>, key: string, ms: number): void {
  map.set(key, (map.get(key) ?? 0) + ms);
}

const top = (map: Map<string, number>, n: number) =>
  [...map].sort((a, b) => b[1] - a[1]).slice(0, n);

/**
 * Sums self time per frame over one span of the profile, given in seconds before its end (the
 * measured load or quiet, not the process's start-up), leaving out the idle samples.
 */
export function summarizeProfile(
  role: string,
  dir: string,
  span: { readonly fromSecondsBeforeEnd: number; readonly toSecondsBeforeEnd?: number },
): ProfileSummary {
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error(`B9: ${role} wrote no CPU profile into ${dir}`);
  const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const frames = new Map<string, number>();
  const areas = new Map<string, number>();
  // Walked backwards from the end: sample i stands for the `timeDeltas[i]` µs before it.
  let at = profile.endTime;
  const from = profile.endTime - span.fromSecondsBeforeEnd * 1e6;
  const to = profile.endTime - (span.toSecondsBeforeEnd ?? 0) * 1e6;
  let busyMs = 0;
  for (let i = profile.samples.length - 1; i >= 0; i--) {
    const delta = profile.timeDeltas[i] ?? 0;
    at -= delta;
    if (at < from) break;
    if (at + delta > to) continue;
    const frame = nodes.get(profile.samples[i] ?? -1);
    const ms = delta / 1000;
    if (frame === undefined || frame.functionName === '(idle)') continue;
    busyMs += ms;
    const name = frame.functionName || '(anonymous)';
    const place = frame.url === '' ? '' : ` ${shortFile(frame.url)}:${frame.lineNumber + 1}`;
    add(frames, `${name}${place}`, ms);
    add(areas, areaOf(frame.url, name), ms);
  }
  return {
    role,
    busyMs,
    frames: top(frames, 6).map(([frame, ms]) => ({ frame, ms })),
    areas: top(areas, 6).map(([area, ms]) => ({ area, ms })),
  };
}
