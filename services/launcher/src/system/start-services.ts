import type { Stack } from '@outbox-inbox/infra';
import { API_ROLE, type ServiceDescriptor } from '@outbox-inbox/service-kit';
import { LauncherError } from '../launcher-error.ts';
import { migrateService } from './migrate-service.ts';
import { componentName } from './role-processes.ts';
import {
  devServicePorts,
  serviceComponents,
  type ServiceComponentsOptions,
} from './service-components.ts';
import { services } from './services.ts';

export interface RunningServices {
  /** Where a service's api answers and which database it uses. */
  of(service: ServiceDescriptor): { readonly apiUrl: string; readonly databaseUrl: string };
}

/**
 * On a running stack: creates each service's database, migrates it and provisions the topics it
 * publishes to, then adds every role of every service as a supervised component and waits until
 * each is ready.
 */
export async function startServices(
  stack: Stack,
  options: Omit<ServiceComponentsOptions, 'databaseUrls' | 'kafkaBrokers'> = {},
): Promise<RunningServices> {
  const databaseUrls: Record<string, string> = {};
  for (const service of services) {
    const url = await stack.createDatabase(service.database);
    await migrateService(service, url, stack.kafkaBrokers);
    databaseUrls[service.name] = url;
  }
  const ports = options.ports ?? devServicePorts();
  const components = serviceComponents({
    ...options,
    ports,
    databaseUrls,
    kafkaBrokers: stack.kafkaBrokers,
  });
  // One at a time: each addProcess rewrites the stack's state file.
  for (const component of components) await stack.addProcess(component);
  return {
    of(service) {
      const port = ports[componentName(service, API_ROLE)];
      const databaseUrl = databaseUrls[service.name];
      if (port === undefined || databaseUrl === undefined) {
        throw new LauncherError('UNKNOWN_COMPONENT', `${service.name} is not part of this system`);
      }
      return { apiUrl: `http://127.0.0.1:${port}`, databaseUrl };
    },
  };
}
