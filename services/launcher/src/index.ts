export {
  componentNames,
  componentRoles,
  devServicePorts,
  serviceComponents,
} from './service-components.ts';
export type { ComponentName, ServiceComponentsOptions } from './service-components.ts';
export { startServices } from './start-services.ts';
export type { RunningServices } from './start-services.ts';
