import { parseArgs } from 'node:util';
import { ConfigError } from '../config/env-reader.ts';

/**
 * The role that serves a service's HTTP API (on PORT); a process without it serves health and
 * metrics on OPS_PORT instead.
 */
export const API_ROLE = 'api';

/**
 * The roles this process runs: `--roles api,relay` on the command line, else `ROLES` in the
 * environment, else all of them (the simple one-process deployment).
 */
export function parseRoles<R extends string>(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  known: readonly R[],
): R[] {
  const { values } = parseArgs({
    args: [...argv],
    options: { roles: { type: 'string' } },
    strict: false,
  });
  const fromArgs = typeof values.roles === 'string' ? values.roles : undefined;
  const source = fromArgs === undefined ? 'ROLES' : '--roles';
  const value = fromArgs ?? env['ROLES'];
  if (value === undefined || value.trim() === '') return [...known];
  const roles: R[] = [];
  for (const name of value.split(',').map((item) => item.trim())) {
    const role = known.find((candidate) => candidate === name);
    if (role === undefined) {
      throw new ConfigError(source, `has unknown role "${name}"; known roles: ${known.join(', ')}`);
    }
    if (!roles.includes(role)) roles.push(role);
  }
  return roles;
}

/** Something started that drains and stops on request: a server, a relay, a consumer. */
export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * Starts parts in order and returns one handle that stops them in reverse order: the API stops
 * accepting first, then the workers finish their batch, then the database pool closes. When a
 * part fails to start, the ones already started are stopped before the error is rethrown.
 */
export async function startInOrder(
  parts: readonly (() => Promise<Stoppable>)[],
): Promise<Stoppable> {
  const started: Stoppable[] = [];
  const stopAll = async (): Promise<void> => {
    const errors: unknown[] = [];
    for (const part of started.reverse()) {
      await part.stop().catch((error: unknown) => errors.push(error));
    }
    if (errors.length > 0) throw new AggregateError(errors, 'some parts failed to stop');
  };
  try {
    for (const start of parts) started.push(await start());
  } catch (error) {
    await stopAll().catch(() => undefined);
    throw error;
  }
  return { stop: stopAll };
}

/**
 * The name a process gives itself to PostgreSQL: `order-relay` for one role, `order-api+relay`
 * for several, the service's name (`order-service`) for all of them, as `pnpm dev` and the
 * e2e suite name their role processes.
 */
export function roleProcessName(
  service: string,
  roles: readonly string[],
  known: readonly string[],
): string {
  if (known.every((role) => roles.includes(role))) return service;
  return `${service.replace(/-service$/, '')}-${roles.join('+')}`;
}
