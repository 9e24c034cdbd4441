import { spawnSync } from 'node:child_process';
import path from 'node:path';
import type * as Testcontainers from 'testcontainers';
import type { ContainerRuntimeClient } from 'testcontainers';
import { InfraError } from '../errors.ts';
import { pollUntil } from '../poll.ts';
import { isReady } from '../readiness.ts';
import type { ContainerRecord } from '../component-record.ts';
import type { ContainerSpec } from './container-spec.ts';
import { stackLabel } from './docker-components.ts';

const stopTimeoutMs = 30_000;
const killTimeoutMs = 10_000;

let loaded: Promise<typeof Testcontainers> | undefined;

/** testcontainers loads only here, so machines without Docker never pay for it (about a second). */
async function testcontainers(): Promise<typeof Testcontainers> {
  loaded ??= import('testcontainers');
  return loaded;
}

async function runtimeClient(): Promise<ContainerRuntimeClient> {
  const { getContainerRuntimeClient } = await testcontainers();
  try {
    return await getContainerRuntimeClient();
  } catch (error) {
    throw new InfraError('DOCKER_MISSING', 'no Docker engine answers', {
      hint: 'start Docker (or set DOCKER_HOST), or use STACK_PROVIDER=local',
      cause: error,
    });
  }
}

/** The host that published ports are reached on (from DOCKER_HOST or the local socket). */
export async function dockerHost(): Promise<string> {
  return (await runtimeClient()).info.containerRuntime.host;
}

function statusCode(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('statusCode' in error)) return undefined;
  return typeof error.statusCode === 'number' ? error.statusCode : undefined;
}

/** Runs a Docker call whose "no such container" / "not running" answers mean: nothing to do. */
async function tolerating(codes: readonly number[], call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (error) {
    const code = statusCode(error);
    if (code === undefined || !codes.includes(code)) throw error;
  }
}

async function inspectRunning(
  client: ContainerRuntimeClient,
  id: string,
): Promise<boolean | undefined> {
  try {
    return (await client.container.getById(id).inspect()).State.Running;
  } catch (error) {
    if (statusCode(error) === 404) return undefined;
    throw error;
  }
}

/** The command that gets the image by hand, with all of Docker's output: pull, or build. */
function imageCommand(spec: ContainerSpec): string {
  return spec.build
    ? `docker build -t ${spec.image} -f ${path.join(spec.build.context, spec.build.dockerfile)} ${spec.build.context}`
    : `docker pull ${spec.image}`;
}

function startError(record: ContainerRecord, spec: ContainerSpec, error: unknown): InfraError {
  const message = error instanceof Error ? error.message : String(error);
  if (/port is already allocated|address already in use/i.test(message)) {
    const ports = spec.ports.map((port) => port.host).join(', ');
    return new InfraError('PORT_TAKEN', `port ${ports} for ${record.name} is taken`, {
      hint: `stop whatever listens there, or set STACK_${record.name.toUpperCase()}_PORT to another port`,
      cause: error,
    });
  }
  return new InfraError(
    'START_FAILED',
    `${record.name}: Docker could not start ${spec.image}: ${message}`,
    {
      hint: `check that the image can be had (\`${imageCommand(spec)}\`) and read \`docker logs ${spec.name}\``,
      cause: error,
    },
  );
}

/**
 * Builds the spec's image when it has a build and no image of that name exists yet (its tag
 * names what it was built from). Docker reports a failed build only in its output, which
 * testcontainers does not keep: the image's absence is the sign.
 */
async function ensureBuilt(client: ContainerRuntimeClient, spec: ContainerSpec): Promise<void> {
  if (spec.build === undefined) return;
  const { ImageName } = await testcontainers();
  const image = ImageName.fromString(spec.image);
  if (await client.image.exists(image)) return;
  await client.image.build(spec.build.context, {
    t: spec.image,
    dockerfile: spec.build.dockerfile,
  });
  if (!(await client.image.exists(image))) {
    throw new Error(`the build of ${spec.image} failed`);
  }
}

/**
 * Creates the container. No Ryuk reaper (autoCleanup off): the container must outlive this
 * process like a detached local server does; `down` removes it.
 */
async function createContainer(
  client: ContainerRuntimeClient,
  spec: ContainerSpec,
  readyTimeoutMs: number,
): Promise<string> {
  // A container of the same name left by this stack (its state file was lost) is replaced.
  const leftover = client.container.getById(spec.name);
  const labels = await leftover.inspect().then(
    (info) => info.Config.Labels,
    () => undefined,
  );
  if (labels && labels[stackLabel] === spec.labels[stackLabel]) {
    await tolerating([404], () => leftover.remove({ force: true, v: true }));
  }
  await ensureBuilt(client, spec);
  const { GenericContainer } = await testcontainers();
  const container = new GenericContainer(spec.image)
    .withName(spec.name)
    .withEnvironment({ ...spec.env })
    .withExposedPorts(...spec.ports.map((port) => ({ container: port.container, host: port.host })))
    .withLabels({ ...spec.labels })
    .withAutoCleanup(false)
    .withStartupTimeout(readyTimeoutMs);
  if (spec.command) container.withCommand([...spec.command]);
  if (spec.network !== undefined) {
    await ensureNetwork(client, spec.network, spec.labels);
    container.withNetworkMode(spec.network);
  }
  if (spec.hostNetwork) container.withNetworkMode('host');
  return (await container.start()).getId();
}

/** The stack's own network, created by the first node that needs it (409: another one did). */
async function ensureNetwork(
  client: ContainerRuntimeClient,
  name: string,
  labels: Readonly<Record<string, string>>,
): Promise<void> {
  const exists = await client.network
    .getById(name)
    .inspect()
    .then(
      () => true,
      () => false,
    );
  if (!exists) {
    await tolerating([409], () => client.network.create({ Name: name, Labels: { ...labels } }));
  }
}

/**
 * Starts the component's container (creating it if it does not exist) and waits until it
 * serves. A stopped or killed container is started again, not recreated: its data stays.
 */
export async function startContainer(record: ContainerRecord): Promise<ContainerRecord> {
  const spec = record.container;
  const client = await runtimeClient();
  let id = record.containerId;
  try {
    const running = id === undefined ? undefined : await inspectRunning(client, id);
    if (id === undefined || running === undefined) {
      id = await createContainer(client, spec, record.readyTimeoutMs);
    } else if (!running) {
      await client.container.start(client.container.getById(id));
    }
  } catch (error) {
    throw startError(record, spec, error);
  }
  const containerId = id;
  try {
    await pollUntil(
      async () => {
        if (!(await inspectRunning(client, containerId))) throw new Error('container exited');
        return isReady(record.readiness);
      },
      {
        timeoutMs: record.readyTimeoutMs,
        intervalMs: 200,
        description: `${record.name} to become ready`,
      },
    );
  } catch (error) {
    throw new InfraError(
      'NOT_READY',
      `${record.name} (container ${spec.name}) did not become ready`,
      {
        hint: `read its log: docker logs ${spec.name}`,
        cause: error,
      },
    );
  }
  return { ...record, containerId };
}

/** `docker stop`: the image's stop signal, SIGKILL after the timeout. The container stays. */
export async function stopContainer(record: ContainerRecord): Promise<ContainerRecord> {
  const id = record.containerId;
  if (id === undefined) return record;
  const client = await runtimeClient();
  await tolerating([304, 404], () =>
    client.container.stop(client.container.getById(id), { timeout: stopTimeoutMs }),
  );
  return record;
}

/** SIGKILL to the container's main process, as a crash would. The container (and data) stays. */
export async function killContainer(record: ContainerRecord): Promise<ContainerRecord> {
  const id = record.containerId;
  if (id === undefined) return record;
  const client = await runtimeClient();
  // 409: the container is not running.
  await tolerating([404, 409], () => client.container.getById(id).kill({ signal: 'SIGKILL' }));
  await pollUntil(async () => !(await inspectRunning(client, id)), {
    timeoutMs: killTimeoutMs,
    description: `${record.name} to die`,
  });
  return record;
}

/** Removes the container and its anonymous volumes: `down`, and the first half of `wipe`. */
export async function removeContainer(record: ContainerRecord): Promise<ContainerRecord> {
  const id = record.containerId;
  if (id === undefined) return record;
  const client = await runtimeClient();
  await tolerating([404], () => client.container.getById(id).remove({ force: true, v: true }));
  return { ...record, containerId: undefined };
}

/**
 * Removes the networks of a stack's containers, once all of them are removed (`down`): a wiped
 * node is recreated on the network its stopped neighbours are still attached to.
 */
export async function removeNetworks(records: readonly ContainerRecord[]): Promise<void> {
  const networks = new Set(records.flatMap((record) => record.container.network ?? []));
  if (networks.size === 0) return;
  const client = await runtimeClient();
  for (const network of networks) {
    // 403/409: something else still uses it; it stays.
    await tolerating([403, 404, 409], () => client.network.getById(network).remove());
  }
}

/** A fresh container on the same ports, empty storage: "Kafka lost its data". */
export async function wipeContainer(record: ContainerRecord): Promise<ContainerRecord> {
  return startContainer(await removeContainer(record));
}

/**
 * Synchronous, because `Stack.status()` is: asks the `docker` CLI. Without the CLI, or when the
 * engine does not answer within the timeout, the container counts as not running.
 */
export function containerStatus(
  record: ContainerRecord,
  env: NodeJS.ProcessEnv = process.env,
): { running: boolean; pid: number | undefined } {
  if (record.containerId === undefined) return { running: false, pid: undefined };
  const result = spawnSync(
    'docker',
    ['inspect', '--format', '{{.State.Running}} {{.State.Pid}}', record.containerId],
    { encoding: 'utf8', timeout: 5000, env },
  );
  if (result.status !== 0) return { running: false, pid: undefined };
  const [running, pid] = result.stdout.trim().split(' ');
  return running === 'true'
    ? { running: true, pid: Number(pid) > 0 ? Number(pid) : undefined }
    : { running: false, pid: undefined };
}
