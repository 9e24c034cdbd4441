import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { findFreePort, findRepoRoot, type Stack } from '@outbox-inbox/infra';
import { roleArgs } from '@outbox-inbox/service-kit/role-command';

const root = findRepoRoot();
const serviceDirs = {
  order: path.join(root, 'services', 'order-service'),
  payment: path.join(root, 'services', 'payment-service'),
} as const;
export type ServiceName = keyof typeof serviceDirs;

/** Runs the service's own migrations (its tables + the outbox library's) on `databaseUrl`. */
export function migrateService(service: ServiceName, databaseUrl: string): void {
  execFileSync(process.execPath, [path.join(serviceDirs[service], 'src', 'migrate.ts')], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

export interface RoleHandle {
  readonly component: string;
  readonly url: string;
  pid(): number | undefined;
  stop(): Promise<void>;
}

/**
 * Starts one role of a service as its own process, registered in the stack like the e2e
 * suite's roles (e2e/src/system.ts), with the service's real entry point and configuration
 * through its environment. Resolves once it answers /health/live.
 */
export async function startRole(
  stack: Stack,
  options: {
    readonly component: string;
    readonly service: ServiceName;
    readonly role: 'api' | 'relay' | 'consumer' | 'processor';
    readonly databaseUrl: string;
    readonly env?: Readonly<Record<string, string>>;
  },
): Promise<RoleHandle> {
  const port = await findFreePort();
  await stack.addProcess({
    name: options.component,
    command: process.execPath,
    args: roleArgs(path.join(serviceDirs[options.service], 'src', 'main.ts'), options.role),
    cwd: serviceDirs[options.service],
    env: {
      DATABASE_URL: options.databaseUrl,
      KAFKA_BROKERS: stack.kafkaBrokers.join(','),
      HOST: '127.0.0.1',
      PORT: String(port),
      OPS_PORT: String(port),
      LOG_LEVEL: 'warn',
      KAFKAJS_NO_PARTITIONER_WARNING: '1',
      ...options.env,
    },
    readiness: { type: 'http', url: `http://127.0.0.1:${port}/health/live` },
    endpoints: { url: `http://127.0.0.1:${port}` },
  });
  return {
    component: options.component,
    url: `http://127.0.0.1:${port}`,
    pid: () => stack.pid(options.component),
    stop: () => stack.stop(options.component),
  };
}
