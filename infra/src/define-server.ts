import path from 'node:path';
import type { ProviderName } from './choose-provider.ts';
import { defineKafka } from './components/kafka.ts';
import { definePostgres, findPostgresBinaries } from './components/postgres.ts';
import { defineDockerKafka, defineDockerPostgres } from './docker/docker-components.ts';
import { dockerHost } from './docker/docker-driver.ts';
import { defineExternal } from './external/external-components.ts';
import { findFreePort } from './ports.ts';
import type { ServerName, UpOptions } from './stack.ts';
import type { ComponentRecord } from './state-file.ts';

/** How one server of a stack is run, for the stack's provider. Free ports unless fixed. */
export async function defineServer(
  provider: ProviderName,
  server: ServerName,
  context: { name: string; dir: string; options: UpOptions; env: NodeJS.ProcessEnv },
): Promise<ComponentRecord> {
  const { name, dir, options, env } = context;
  const ports = options.ports ?? {};
  const heap = options.kafkaHeapMb === undefined ? {} : { heapMb: options.kafkaHeapMb };
  switch (provider) {
    case 'external':
      return defineExternal(server, env);
    case 'docker': {
      const host = await dockerHost();
      return server === 'postgres'
        ? defineDockerPostgres({
            stack: name,
            host,
            port: ports.postgres ?? (await findFreePort()),
          })
        : defineDockerKafka({
            stack: name,
            host,
            port: ports.kafka ?? (await findFreePort()),
            ...(ports.kafkaController === undefined
              ? {}
              : { controllerPort: ports.kafkaController }),
            ...heap,
          });
    }
    case 'local':
      return server === 'postgres'
        ? definePostgres({
            dir: path.join(dir, 'postgres'),
            port: ports.postgres ?? (await findFreePort()),
            binDir: findPostgresBinaries(env),
          })
        : defineKafka({
            dir: path.join(dir, 'kafka'),
            port: ports.kafka ?? (await findFreePort()),
            controllerPort: ports.kafkaController ?? (await findFreePort()),
            ...heap,
            env,
          });
  }
}
