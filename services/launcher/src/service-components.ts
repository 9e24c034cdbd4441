import path from 'node:path';
import type { ProcessComponent } from '@outbox-inbox/infra';
import { roleArgs } from '@outbox-inbox/service-kit/role-command';

/** Every role of both services, one process each: the stack's component names. */
export const componentRoles = Object.freeze({
  'order-api': { service: 'order-service', role: 'api' },
  'order-relay': { service: 'order-service', role: 'relay' },
  'order-consumer': { service: 'order-service', role: 'consumer' },
  'payment-api': { service: 'payment-service', role: 'api' },
  'payment-relay': { service: 'payment-service', role: 'relay' },
  'payment-consumer': { service: 'payment-service', role: 'consumer' },
  'payment-processor': { service: 'payment-service', role: 'processor' },
} as const);

export type ComponentName = keyof typeof componentRoles;
export const componentNames = Object.freeze(
  Object.keys(componentRoles),
) as readonly ComponentName[];

/**
 * HTTP port of each process: the API port for an api role, the health + metrics port
 * (OPS_PORT) for the others. The dev stack's fixed ports; tests pass free ones.
 */
export const devServicePorts: Readonly<Record<ComponentName, number>> = Object.freeze({
  'order-api': 3001,
  'payment-api': 3002,
  'order-relay': 3011,
  'order-consumer': 3012,
  'payment-relay': 3021,
  'payment-consumer': 3022,
  'payment-processor': 3023,
});

export interface ServiceComponentsOptions {
  readonly repoRoot: string;
  readonly orderDatabaseUrl: string;
  readonly paymentDatabaseUrl: string;
  readonly kafkaBrokers: readonly string[];
  readonly ports?: Readonly<Record<ComponentName, number>>;
  /** Extra environment for every process (e.g. PAYMENT_LATENCY_MS, FAULT_CRASH_AFTER_PUBLISH). */
  readonly env?: Readonly<Record<string, string>>;
  /** Extra environment for one component. */
  readonly componentEnv?: Partial<Record<ComponentName, Readonly<Record<string, string>>>>;
  readonly logLevel?: string;
}

/**
 * The stack components that run both services, one role per process, so a person or a test
 * can kill exactly one (`pnpm stack kill order-relay`). Each is ready when its
 * `/health/ready` answers.
 */
export function serviceComponents(options: ServiceComponentsOptions): ProcessComponent[] {
  const ports = options.ports ?? devServicePorts;
  return componentNames.map((name) => {
    const { service, role } = componentRoles[name];
    const port = ports[name];
    const url = `http://127.0.0.1:${port}`;
    const endpoints: Record<string, string> =
      role === 'api' ? { url } : { health: `${url}/health/ready`, metrics: `${url}/metrics` };
    return {
      name,
      command: process.execPath,
      args: roleArgs('src/main.ts', role),
      cwd: path.join(options.repoRoot, 'services', service),
      env: {
        DATABASE_URL:
          service === 'order-service' ? options.orderDatabaseUrl : options.paymentDatabaseUrl,
        KAFKA_BROKERS: options.kafkaBrokers.join(','),
        HOST: '127.0.0.1',
        [role === 'api' ? 'PORT' : 'OPS_PORT']: String(port),
        LOG_LEVEL: options.logLevel ?? 'info',
        KAFKAJS_NO_PARTITIONER_WARNING: '1',
        ...options.env,
        ...options.componentEnv?.[name],
      },
      readiness: { type: 'http', url: `${url}/health/ready` },
      readyTimeoutMs: 30_000,
      endpoints,
    };
  });
}
