import { urlAsLogin, type ProcessComponent } from '@outbox-inbox/infra';
import { LauncherError } from '../launcher-error.ts';
import { roleComponent, type RoleComponentOptions } from './role-component.ts';
import { roleProcesses, type RoleProcess } from './role-processes.ts';

/**
 * The port of each role process on a developer's machine: the service's own, or
 * `STACK_<COMPONENT>_PORT` (e.g. STACK_ORDER_API_PORT), so a second system fits beside the first.
 */
export function devServicePorts(env: NodeJS.ProcessEnv = process.env): Record<string, number> {
  const ports: Record<string, number> = {};
  for (const { name, service, role } of roleProcesses()) {
    const variable = `STACK_${name.toUpperCase().replaceAll('-', '_')}_PORT`;
    const port = env[variable] ?? service.ports[role];
    if (port === undefined) throw new LauncherError('UNKNOWN_COMPONENT', `${name} has no port`);
    ports[name] = Number(port);
  }
  return ports;
}

export interface ServiceComponentsOptions extends Omit<
  RoleComponentOptions,
  'port' | 'databaseUrl' | 'command'
> {
  /**
   * Connection string of each service's database, by service name, as its owner connects: each
   * role connects as its own login instead (see {@link roleDatabaseUrl}).
   */
  readonly databaseUrls: Readonly<Record<string, string>>;
  /** Port of each component; {@link devServicePorts} when absent. */
  readonly ports?: Readonly<Record<string, number>>;
}

/**
 * `ownerUrl` as the role's own login (`payment-processor`), which the migrate step granted exactly
 * the role's declared access. The relays keep the owner's: a running relay can be switched to
 * the CDC relay (`stack restart order-relay --env RELAY_MODE=cdc`, the workshop's exercise 5),
 * which creates its publication and heartbeat table, and that takes the tables' owner.
 */
export function roleDatabaseUrl(process: RoleProcess, ownerUrl: string): string {
  if (process.role === 'relay') return ownerUrl;
  const login = process.service.logins[process.role];
  return login === undefined ? ownerUrl : urlAsLogin(ownerUrl, login);
}

/** Every role of every service as its own stack component, one process each. */
export function serviceComponents(options: ServiceComponentsOptions): ProcessComponent[] {
  const { databaseUrls, ports = devServicePorts(), ...common } = options;
  return roleProcesses().map((process) => {
    const port = ports[process.name];
    const databaseUrl = databaseUrls[process.service.name];
    if (port === undefined || databaseUrl === undefined) {
      throw new LauncherError(
        'UNKNOWN_COMPONENT',
        `${process.name} needs a port and a database URL for ${process.service.name}`,
      );
    }
    return roleComponent(process, {
      ...common,
      port,
      databaseUrl: roleDatabaseUrl(process, databaseUrl),
    });
  });
}
