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
  const stack = await Stack.up({
    name: `e2e-shared-${process.pid}`,
    servers: ['postgres', 'kafka'],
    kafkaHeapMb: 512,
    env: { ...process.env, STACK_PROVIDER: 'local' },
  });
  project.provide('sharedServersStack', stack.name);
  return async () => {
    await stack.down();
  };
}
