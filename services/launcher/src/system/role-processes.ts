import type { ServiceDescriptor } from '@outbox-inbox/service-kit';
import { services } from './services.ts';

/** One process of the system: one role of one service, under its stack component name. */
export interface RoleProcess {
  /** `order-relay`, or `order-relay-2` when the role runs as several processes. */
  readonly name: string;
  readonly service: ServiceDescriptor;
  readonly role: string;
}

/** `order-relay`: the component of a role that runs as one process. */
export function componentName(service: ServiceDescriptor, role: string): string {
  return `${service.componentPrefix}-${role}`;
}

/**
 * Every role of every service as its own process, so a person or a test can kill exactly one.
 * `instances` runs a role as several processes (`{ 'order-relay': 2 }` gives order-relay-1
 * and order-relay-2).
 */
export function roleProcesses(
  instances: Readonly<Record<string, number>> = {},
  of: readonly ServiceDescriptor[] = services,
): RoleProcess[] {
  return of.flatMap((service) =>
    service.roles.flatMap((role) => {
      const name = componentName(service, role);
      const count = instances[name] ?? 1;
      if (count === 1) return [{ name, service, role }];
      return Array.from({ length: count }, (_, i) => ({ name: `${name}-${i + 1}`, service, role }));
    }),
  );
}

/** The stack component names of every role, one process each. */
export const componentNames: readonly string[] = Object.freeze(
  roleProcesses().map((process) => process.name),
);
