import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  connectImageName,
  connectWorkerEnv,
  connectWorkerSettings,
  postgresServerSettings,
  postgresSettingArgs,
} from '@outbox-inbox/infra';
import { API_ROLE, ROLE_NODE_FLAGS } from '@outbox-inbox/service-kit';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { componentName } from './role-processes.ts';
import { services } from './services.ts';

// No Docker engine runs where this suite runs: these checks read the compose file and the
// Dockerfile and hold them to the service descriptors, which is what drifts.

interface ComposeService {
  readonly profiles?: string[];
  readonly image?: string;
  readonly build?: { context: string; dockerfile: string; args?: Record<string, string> };
  readonly command?: string[];
  readonly environment?: Record<string, string>;
  readonly ports?: string[];
  readonly depends_on?: Record<string, { condition: string }>;
  readonly entrypoint?: string[];
  readonly healthcheck?: { test: string[] };
}

const root = path.resolve(import.meta.dirname, '../../../..');
const compose = parse(
  readFileSync(path.join(root, 'infra/docker-compose.yml'), 'utf8'),
  // Every role takes its relay mode from one place (`<<: *relay-mode`).
  { merge: true },
) as {
  services: Record<string, ComposeService>;
};

function composeService(name: string): ComposeService {
  const found = compose.services[name];
  if (found === undefined) throw new Error(`infra/docker-compose.yml has no service ${name}`);
  return found;
}

const workspace = parse(readFileSync(path.join(root, 'pnpm-workspace.yaml'), 'utf8')) as {
  patchedDependencies?: Record<string, string>;
};
/** The patch files pnpm-workspace.yaml names: pnpm refuses to fetch without them. */
const patchFiles = Object.values(workspace.patchedDependencies ?? {});

/** The patterns of .dockerignore, exceptions (`!`) left out: what the build context lacks. */
const ignored = readFileSync(path.join(root, '.dockerignore'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#') && !line.startsWith('!'));

/** Whether .dockerignore leaves a file of the repository out of the build context. */
function leftOutOfContext(file: string): boolean {
  const parts = file.split('/');
  const selfAndFolders = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  return ignored.some((pattern) => selfAndFolders.some((p) => path.matchesGlob(p, pattern)));
}

/**
 * Where a COPY instruction (`COPY [--flag] <source>... <destination>`) puts a file of the
 * context, relative to the working directory; undefined when it does not copy it.
 */
function copiedTo(copy: string, file: string): string | undefined {
  const args = copy.split(/\s+/).filter((arg) => !arg.startsWith('--'));
  const destination = args.at(-1) ?? '';
  for (const source of args.slice(0, -1).map((arg) => path.posix.normalize(arg))) {
    if (source === file) {
      return destination.endsWith('/')
        ? path.posix.join(destination, path.posix.basename(file))
        : path.posix.normalize(destination);
    }
    if (source === '.' || file.startsWith(`${source}/`)) {
      return path.posix.join(destination, path.posix.relative(source, file));
    }
  }
  return undefined;
}

/** The one Dockerfile both services' images are built from, with SERVICE naming the folder. */
const dockerfile = 'services/Dockerfile';

interface Instruction {
  readonly keyword: string;
  /** The arguments with build arguments (`${NAME}`, `$NAME`) replaced by their values. */
  readonly rest: string;
  /** The build arguments the instruction refers to. */
  readonly refersTo: string[];
}

/** The Dockerfile's instructions as a build with these arguments sees them; no comments. */
function instructions(buildArgs: Record<string, string>): Instruction[] {
  const text = readFileSync(path.join(root, dockerfile), 'utf8');
  const reference = /\$\{(\w+)\}|\$(\w+)/g;
  return text
    .replaceAll(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [keyword = '', ...words] = line.split(/\s+/);
      const raw = words.join(' ');
      const refersTo = [...raw.matchAll(reference)]
        .map((match) => match[1] ?? match[2] ?? '')
        .filter((name) => name in buildArgs);
      const rest = raw.replaceAll(reference, (match, braced?: string, bare?: string) => {
        const name = braced ?? bare ?? '';
        return buildArgs[name] ?? match;
      });
      return { keyword: keyword.toUpperCase(), rest, refersTo };
    });
}

/** The instructions split into build stages, each starting at its FROM. */
function stages(lines: Instruction[]): Instruction[][] {
  const starts = lines.flatMap((line, i) => (line.keyword === 'FROM' ? [i] : []));
  return starts.map((start, n) => lines.slice(start, starts[n + 1]));
}

describe.each(services.map((service) => [service.name, service] as const))('%s', (_, service) => {
  const image = `outbox-inbox/${service.name}`;
  const database = `postgres://postgres@postgres:5432/${service.database}`;
  const migrate = composeService(`${service.componentPrefix}-migrate`);
  const buildArgs = migrate.build?.args ?? {};

  it('has a migrate container that builds the image and runs the migrate program', () => {
    expect(migrate).toMatchObject({
      profiles: ['app'],
      image,
      build: { context: '..', dockerfile, args: { SERVICE: service.name } },
      command: [service.programs.migrate],
      environment: { DATABASE_URL: database, KAFKA_BROKERS: 'kafka:29092' },
    });
    expect(migrate.depends_on?.['kafka']).toEqual({ condition: 'service_healthy' });
    const created = composeService('create-databases').entrypoint?.join(' ') ?? '';
    expect(created).toContain(service.database);
  });

  it.each(service.roles.map((role) => [role]))(
    'runs role %s after migrate, on its port',
    (role) => {
      const container = composeService(componentName(service, role));
      const port = service.ports[role];
      expect(container).toMatchObject({
        profiles: ['app'],
        image,
        command: [service.programs.main, '--roles', role],
        ports: [`${port}:${port}`],
        depends_on: {
          [`${service.componentPrefix}-migrate`]: { condition: 'service_completed_successfully' },
        },
      });
      const environment = container.environment ?? {};
      expect(environment[role === API_ROLE ? 'PORT' : 'OPS_PORT']).toBe(String(port));
      // Its own login, which the migrate container created; a relay as the owner (RELAY_MODE=cdc
      // creates the publication and heartbeat table).
      const login = role === 'relay' ? 'postgres' : service.logins[role];
      expect(environment['DATABASE_URL']).toBe(
        `postgres://${login}@postgres:5432/${service.database}`,
      );
      if (service.rolesNeedKafka([role])) expect(environment['KAFKA_BROKERS']).toBe('kafka:29092');
      // Polling unless the shell says RELAY_MODE=cdc; then Debezium on the connect container.
      expect(environment['RELAY_MODE']).toBe('${RELAY_MODE:-polling}');
      expect(environment['CONNECT_URL']).toBe('http://connect:8083');
      // Every variable set is one the service reads; every required one is set.
      const reads = service.env.map((variable) => variable.name);
      expect(Object.keys(environment).filter((name) => !reads.includes(name))).toEqual([]);
      const required = service.env.filter((variable) => variable.required).map((v) => v.name);
      const needed = required.filter(
        (name) => name !== 'KAFKA_BROKERS' || service.rolesNeedKafka([role]),
      );
      expect(needed.filter((name) => environment[name] === undefined)).toEqual([]);
    },
  );

  it('has no other container of its image than its roles and migrate', () => {
    const ofImage = Object.entries(compose.services)
      .filter(([, container]) => container.image === image)
      .map(([name]) => name)
      .sort();
    const expected = [
      `${service.componentPrefix}-migrate`,
      ...service.roles.map((role) => componentName(service, role)),
    ].sort();
    expect(ofImage).toEqual(expected);
  });

  it('builds from the shared Dockerfile: multi-stage, node 24, production dependencies only, non-root, health checked', () => {
    // SERVICE names the service's folder; the image installs and runs that folder.
    expect(path.relative(root, service.directory)).toBe(`services/${service.name}`);
    const lines = instructions(buildArgs);
    const from = lines.filter((line) => line.keyword === 'FROM');
    expect(from.length).toBeGreaterThanOrEqual(2);
    for (const stage of from) expect(stage.rest).toMatch(/^node:24(-|\s|$)/);
    const final = stages(lines).at(-1) ?? [];
    const install = lines.find((line) => line.rest.startsWith('pnpm install'));
    expect(install?.rest).toMatch(/--prod\b/);
    expect(install?.rest).toContain(`--filter "@outbox-inbox/${service.name}..."`);
    const user = final.filter((line) => line.keyword === 'USER').at(-1);
    expect(user?.rest).toBeDefined();
    expect(user?.rest).not.toMatch(/^(root|0)(:|$)/);
    expect(final.find((line) => line.keyword === 'HEALTHCHECK')?.rest).toContain('/health/ready');
    expect(final.find((line) => line.keyword === 'WORKDIR')?.rest).toBe(
      `/repo/services/${service.name}`,
    );
    expect(JSON.parse(final.find((line) => line.keyword === 'ENTRYPOINT')?.rest ?? '[]')).toEqual([
      'node',
      ...ROLE_NODE_FLAGS,
    ]);
    expect(JSON.parse(final.find((line) => line.keyword === 'CMD')?.rest ?? '[]')).toEqual([
      service.programs.main,
    ]);
  });

  it('declares each build argument in every stage that uses it (an ARG ends with its stage)', () => {
    for (const stage of stages(instructions(buildArgs))) {
      const used = new Set(stage.flatMap((line) => line.refersTo));
      const declared = stage
        .filter((line) => line.keyword === 'ARG')
        .map((l) => l.rest.split('=')[0]);
      expect(
        [...used].filter((name) => !declared.includes(name)),
        stage[0]?.rest,
      ).toEqual([]);
    }
  });

  it('copies every patch pnpm-workspace.yaml names into the workspace before `pnpm fetch`', () => {
    expect(patchFiles).not.toEqual([]);
    const lines = instructions(buildArgs);
    const fetch = lines.findIndex((line) => /^pnpm fetch\b/.test(line.rest));
    expect(fetch).toBeGreaterThan(0);
    const before = lines.slice(
      lines.findLastIndex((l, i) => i < fetch && l.keyword === 'FROM'),
      fetch,
    );
    // The workspace root is the working directory, so a patch lands at its repository path.
    expect(before.filter((line) => line.keyword === 'WORKDIR').at(-1)?.rest).toBe('/repo');
    for (const patch of patchFiles) {
      expect(leftOutOfContext(patch), `.dockerignore leaves out ${patch}`).toBe(false);
      const copies = before.filter((line) => line.keyword === 'COPY');
      const landed = copies.map((line) => copiedTo(line.rest, patch)).filter((to) => to);
      expect(landed, `${patch} copied before pnpm fetch`).toContain(patch);
    }
  });
});

describe.each(['infra/docker-compose.yml', 'infra/docker-compose.cluster.yml'])('%s', (file) => {
  it('runs PostgreSQL with the settings the local provider uses', () => {
    const { services: containers } = parse(readFileSync(path.join(root, file), 'utf8')) as {
      services: Record<string, ComposeService>;
    };
    expect(containers['postgres']?.command).toEqual([
      'postgres',
      ...postgresSettingArgs(postgresServerSettings),
    ]);
  });
});

describe('infra/docker-compose.yml, profile cdc', () => {
  const connect = composeService('connect');

  it('runs Kafka Connect from infra/connect/Dockerfile, with the settings of a worker on the compose network', () => {
    expect(connect).toMatchObject({
      profiles: ['cdc'],
      image: connectImageName,
      build: { context: 'connect' },
      ports: ['${STACK_CONNECT_PORT:-18083}:8083'],
      depends_on: { kafka: { condition: 'service_healthy' } },
    });
    // The roles' CONNECT_URL names this service and its listener; Kafka is the roles' Kafka.
    const place = {
      brokers: ['kafka:29092'],
      port: 8083,
      listenHost: '0.0.0.0',
      advertisedHost: 'connect',
    };
    expect(connect.environment).toEqual(connectWorkerEnv(connectWorkerSettings(place)));
  });

  it('is healthy once its REST API lists the connectors', () => {
    expect(connect.healthcheck?.test.join(' ')).toContain('http://127.0.0.1:8083/connectors');
  });
});
