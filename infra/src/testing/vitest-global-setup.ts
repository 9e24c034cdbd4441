import path from 'node:path';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { Stack } from '../stack.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Name of the stack this test run owns; `Stack.open(inject('stackName'))` attaches to it. */
    stackName: string;
  }
}

/**
 * Vitest `globalSetup`: one real PostgreSQL + Kafka for the whole test run of a package, on
 * free ports, named after the package and this process so parallel runs never collide.
 * Leftovers of crashed runs are stopped first.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await Stack.reapOrphans();
  const name = `test-${path.basename(project.config.root)}-${process.pid}`;
  const stack = await Stack.up({ name, kafkaHeapMb: 512 });
  project.provide('stackName', name);
  return async () => {
    await stack.down();
  };
}
