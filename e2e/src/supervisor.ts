import type { System } from './system.ts';

/**
 * Restarts role processes that died, as an orchestrator's restart policy would: the ones that
 * killed themselves at an armed kill point, the ones a test kills. Each component restarts
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
    for (const { name } of system.roles) {
      if (held.has(name) || starting.has(name)) continue;
      if (system.stack.isRunning(name)) continue;
      starting.set(name, restart(name));
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
