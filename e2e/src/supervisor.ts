import type { System } from './system.ts';

/**
 * Restarts role processes that died, as an orchestrator's restart policy would: the relays
 * that SIGKILL themselves after a send, the consumers a test kills. Counts the restarts.
 */
export function superviseRoles(system: System, options: { intervalMs?: number } = {}) {
  const restarts: Record<string, number> = {};
  const held = new Set<string>();
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      for (const { component } of system.roles) {
        if (held.has(component) || system.stack.isRunning(component)) continue;
        try {
          await system.stack.start(component);
          restarts[component] = (restarts[component] ?? 0) + 1;
        } catch {
          // Its dependencies may be down (PostgreSQL restarting): try again on the next tick.
        }
      }
    } finally {
      busy = false;
    }
  }, options.intervalMs ?? 250);

  return {
    restarts: (): Readonly<Record<string, number>> => ({ ...restarts }),
    /** Keep a component down on purpose (the test restarts it itself). */
    hold: (component: string) => held.add(component),
    release: (component: string) => held.delete(component),
    async stop(): Promise<void> {
      clearInterval(timer);
      while (busy) await new Promise((resolve) => setTimeout(resolve, 50));
    },
  };
}
