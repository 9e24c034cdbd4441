import { Stack } from '@outbox-inbox/infra';
import type { TestProject } from 'vitest/node';
import './shared-servers.ts';

/**
 * Vitest `globalSetup`: one PostgreSQL and one Kafka node for every scenario that neither
 * kills, freezes, wipes nor restarts a server (see `ownServers` in system.ts). Starting them
 * once saves each such scenario a Kafka start and stop; each still gets its own databases and,
 * once it ends, a Kafka with no topic and no group left (shared-servers.ts).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // STACK_PROVIDER=external: servers someone else runs (the mutation runner's), named by
  // STACK_POSTGRES_URL and KAFKA_BROKERS; otherwise this run's own.
  const external = process.env['STACK_PROVIDER'] === 'external';
  const stack = await Stack.up({
    name: `e2e-shared-${process.pid}`,
    servers: ['postgres', 'kafka'],
    kafkaHeapMb: 512,
    env: { ...process.env, STACK_PROVIDER: external ? 'external' : 'local' },
  });
  project.provide('sharedServersStack', stack.name);
  return async () => {
    await stack.down();
  };
}
