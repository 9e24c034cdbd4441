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
import { InfraError } from './errors.ts';
import type { ComponentRecord } from './component-record.ts';

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

/**
 * `.stack/` at the repo root, or `STACK_HOME`, always absolute: the folders under it are passed
 * to initdb, postgres and Kafka as arguments, where a relative `-x/...` would read as an option.
 */
export function stacksHome(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env['STACK_HOME'] ?? path.join(repoRoot, '.stack'));
}

/** Stack names become folder names and command-line values: letters, digits, `.`, `_`, `-`. */
const stackNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export function stackDir(name: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!stackNamePattern.test(name)) {
    throw new InfraError('INVALID_NAME', `invalid stack name ${JSON.stringify(name)}`, {
      hint: 'use letters, digits, ".", "_" and "-", starting with a letter or digit',
    });
  }
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
  return readdirSync(home).filter(
    (name) => stackNamePattern.test(name) && existsSync(stateFile(name, env)),
  );
}
