import type { Stack } from '@outbox-inbox/infra';

/**
 * SIGSTOP to a component's process: it keeps its sockets and state but answers nothing, as a
 * long GC pause or a stalled VM does. `thaw` (SIGCONT) lets it run on from where it was.
 */
export function freeze(stack: Stack, component: string): void {
  signal(stack, component, 'SIGSTOP');
}

export function thaw(stack: Stack, component: string): void {
  signal(stack, component, 'SIGCONT');
}

function signal(stack: Stack, component: string, name: 'SIGSTOP' | 'SIGCONT'): void {
  const pid = stack.pid(component);
  if (pid === undefined) throw new Error(`${component} is not running: nothing to ${name}`);
  process.kill(pid, name);
}
