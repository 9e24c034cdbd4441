import type { System } from './system.ts';

/**
 * Restarts role processes that died, as an orchestrator's restart policy would: the relays
 * that SIGKILL themselves after a send, the consumers a test kills. Each component restarts
 * on its own, so one slow start never delays another. Counts the restarts.
 */
export function superviseRoles(system: System, options: { intervalMs?: number } = {}) {
  const restarts: Record<string, number> = {};
  const held = new Set<string>();
  const starting = new Map<string, Promise<void>>();

  const restart = async (component: string): Promise<void> => {
    try {
      await system.stack.start(component);
      restarts[component] = (restarts[component] ?? 0) + 1;
    } catch {
      // Its dependencies may be down (PostgreSQL restarting): the next tick tries again.
    } finally {
      starting.delete(component);
    }
  };

  const timer = setInterval(() => {
    for (const { component } of system.roles) {
      if (held.has(component) || starting.has(component)) continue;
      if (system.stack.isRunning(component)) continue;
      starting.set(component, restart(component));
    }
  }, options.intervalMs ?? 250);

  return {
    restarts: (): Readonly<Record<string, number>> => ({ ...restarts }),
    /** Keep a component down on purpose (the test restarts it itself). */
    hold: (component: string) => held.add(component),
    release: (component: string) => held.delete(component),
    async stop(): Promise<void> {
      clearInterval(timer);
      await Promise.all(starting.values());
    },
  };
}
