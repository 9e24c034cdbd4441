import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ImageBuild } from './container-spec.ts';

/** The image infra/connect/Dockerfile builds; the compose files build it under this name too. */
export const connectImageName = 'outbox-inbox/connect';

/** The files of a build context, as paths relative to it, sorted; Maven's output left out. */
function contextFiles(dir: string, under = ''): string[] {
  return readdirSync(path.join(dir, under), { withFileTypes: true })
    .filter((entry) => !(under === '' && entry.name === 'target'))
    .flatMap((entry) => {
      const relative = path.posix.join(under, entry.name);
      return entry.isDirectory() ? contextFiles(dir, relative) : [relative];
    })
    .sort();
}

/**
 * The Kafka Connect image of the docker provider, tagged with a hash of what it is built from
 * (Dockerfile, pom.xml, the transformation's sources, the worker's settings): a stack builds it
 * only when no image of that tag exists yet, and a change to any of them makes a new tag.
 */
export function connectImage(projectDir: string): { image: string; build: ImageBuild } {
  const hash = createHash('sha256');
  for (const file of contextFiles(projectDir)) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(path.join(projectDir, file)));
    hash.update('\0');
  }
  return {
    image: `${connectImageName}:${hash.digest('hex').slice(0, 12)}`,
    build: { context: projectDir, dockerfile: 'Dockerfile' },
  };
}

/**
 * Worker properties as the image's variables (docker-entrypoint.sh turns them back):
 * `bootstrap.servers` is CONNECT_BOOTSTRAP_SERVERS.
 */
export function connectWorkerEnv(
  settings: Readonly<Record<string, string>>,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(settings).map(([key, value]) => {
      if (!/^[a-z0-9.]+$/.test(key)) {
        // The variable's name could not be turned back into this key.
        throw new Error(`worker property ${key} has no CONNECT_* variable`);
      }
      return [`CONNECT_${key.toUpperCase().replaceAll('.', '_')}`, value];
    }),
  );
}
