import { findFreePort, type Stack } from '@outbox-inbox/infra';
import { roleComponent } from '@outbox-inbox/launcher';
import type { Command, ServiceDescriptor } from '@outbox-inbox/service-kit';

export interface RoleHandle {
  readonly component: string;
  readonly url: string;
  pid(): number | undefined;
  stop(): Promise<void>;
}

/**
 * Starts one role of a service as its own process, registered in the stack as the launcher
 * builds every role process: the service's real program (or `command`, a variant of it) and
 * its configuration through its environment. Resolves once it answers /health/live.
 */
export async function startRole(
  stack: Stack,
  options: {
    readonly component: string;
    readonly service: ServiceDescriptor;
    readonly role: string;
    readonly databaseUrl: string;
    readonly settings?: Readonly<Record<string, string>>;
    readonly command?: Command;
  },
): Promise<RoleHandle> {
  const { component, service, role } = options;
  const port = await findFreePort();
  await stack.addProcess(
    roleComponent(
      { name: component, service, role },
      {
        port,
        databaseUrl: options.databaseUrl,
        kafkaBrokers: stack.kafkaBrokers,
        logLevel: 'warn',
        readiness: 'live',
        settings: options.settings,
        command: options.command,
      },
    ),
  );
  return {
    component,
    url: `http://127.0.0.1:${port}`,
    pid: () => stack.pid(component),
    stop: () => stack.stop(component),
  };
}

/** A service's default for one of its variables, as its own configuration reads it. */
export function defaultOf(service: ServiceDescriptor, variable: string): string {
  return service.env.find((candidate) => candidate.name === variable)?.default ?? 'unset';
}
