import type { Stack } from '@outbox-inbox/infra';
import { LauncherError } from '../launcher-error.ts';
import { followLogs } from './follow-logs.ts';
import { prettyLogLine } from './pretty-log-line.ts';

/**
 * The roles the names ask for: a component's full name (`order-relay`), the name of a role run
 * as several processes (`order-relay` gives `order-relay-1` and `order-relay-2`), or a
 * service's prefix (`payment` gives every payment role). No names: every role.
 */
export function selectRoles(roles: readonly string[], names: readonly string[]): string[] {
  if (names.length === 0) return [...roles];
  for (const name of names) {
    if (!roles.some((role) => role === name || role.startsWith(`${name}-`))) {
      throw new LauncherError(
        'UNKNOWN_COMPONENT',
        `no role "${name}" in the stack; roles: ${roles.join(', ')}`,
      );
    }
  }
  return roles.filter((role) => names.some((name) => role === name || role.startsWith(`${name}-`)));
}

/**
 * Follows the logs of the stack's roles, readable (pino-pretty, one line per entry, each
 * prefixed by its component), and writes them with `write`.
 */
export function followRoleLogs(options: {
  stack: Stack;
  /** Names as `selectRoles` takes them; none for every role. */
  only: readonly string[];
  from: 'start' | 'end';
  colorize: boolean;
  write: (text: string) => void;
  intervalMs?: number;
}): { components: string[]; stop(): void } {
  const roles = Object.values(options.stack.state.components)
    .filter((record) => record.kind === 'process')
    .map((record) => record.name);
  const components = selectRoles(roles, options.only);
  const files = components.flatMap((component) => {
    const file = options.stack.logFile(component);
    return file ? [{ component, file }] : [];
  });
  const format = prettyLogLine({
    colorize: options.colorize,
    width: Math.max(...components.map((component) => component.length)),
  });
  const following = followLogs({
    files,
    from: options.from,
    onLine: (component, line) => options.write(`${format(component, line)}\n`),
    ...(options.intervalMs === undefined ? {} : { intervalMs: options.intervalMs }),
  });
  return { components, stop: () => following.stop() };
}
