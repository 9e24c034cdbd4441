import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ContainerSpec } from './docker/docker-components.ts';
import type { LaunchSpec } from './process/launch.ts';
import type { ProcessIdentity } from './process/process-identity.ts';

/** How to tell that a component is ready to serve. */
export type Readiness =
  | { readonly type: 'postgres'; readonly url: string }
  | { readonly type: 'kafka'; readonly brokers: readonly string[] }
  | { readonly type: 'http'; readonly url: string }
  | { readonly type: 'tcp'; readonly port: number };

/** One-off command run before the first start, while the data folder is empty (initdb, Kafka format). */
export interface PrepareSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly uid?: number | undefined;
  readonly gid?: number | undefined;
}

export interface ComponentRecord {
  readonly name: string;
  readonly kind: 'postgres' | 'kafka' | 'process' | 'container' | 'external';
  readonly launch?: LaunchSpec;
  readonly prepare?: PrepareSpec;
  readonly dataDir?: string;
  readonly readiness: Readiness;
  readonly readyTimeoutMs: number;
  /** Graceful stop: PostgreSQL's fast shutdown is SIGINT, the JVM and Node take SIGTERM. */
  readonly stopSignal: NodeJS.Signals;
  /** Connection details other code needs: `url` for PostgreSQL, `brokers` for Kafka, … */
  readonly endpoints: Readonly<Record<string, string>>;
  readonly ports: Readonly<Record<string, number>>;
  /** The docker provider's container: how to create it, and its id once created. */
  readonly container?: ContainerSpec;
  readonly containerId?: string | undefined;
  /** Set while it runs; cleared by stop and kill. */
  readonly process?: ProcessIdentity | undefined;
}

export interface StackState {
  readonly name: string;
  readonly provider: 'local' | 'docker' | 'external';
  readonly createdAt: string;
  /** The process that owns a non-detached stack; a dead owner marks leftovers of a crashed run. */
  readonly ownerPid: number | undefined;
  readonly components: Readonly<Record<string, ComponentRecord>>;
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The repository root: the CLI, Maven and the services are found relative to it. */
export function findRepoRoot(): string {
  return repoRoot;
}

/** `.stack/` at the repo root, or `STACK_HOME`. */
export function stacksHome(env: NodeJS.ProcessEnv = process.env): string {
  return env['STACK_HOME'] ?? path.join(repoRoot, '.stack');
}

export function stackDir(name: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(stacksHome(env), name);
}

function stateFile(name: string, env?: NodeJS.ProcessEnv): string {
  return path.join(stackDir(name, env), 'state.json');
}

export function readState(name: string, env?: NodeJS.ProcessEnv): StackState | undefined {
  const file = stateFile(name, env);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as StackState;
}

/** Atomic replace, so a reader in another shell never sees half a file. */
export function writeState(state: StackState, env?: NodeJS.ProcessEnv): void {
  const file = stateFile(state.name, env);
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(temporary, file);
}

export function listStackNames(env?: NodeJS.ProcessEnv): string[] {
  const home = stacksHome(env);
  if (!existsSync(home)) return [];
  return readdirSync(home).filter((name) => existsSync(stateFile(name, env)));
}
