import { rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { chooseProvider, type ProviderName } from './choose-provider.ts';
import { controlsFor } from './component-driver.ts';
import { logFileOf, type ComponentRecord } from './component-record.ts';
import { defineServer } from './define-server.ts';
import { removeNetworks } from './docker/docker-driver.ts';
import { InfraError } from './errors.ts';
import { awaitExternal } from './external/external-components.ts';
import { definePgBouncer, findPgBouncer, PGBOUNCER_COMPONENT } from './components/pgbouncer.ts';
import { findFreePort } from './ports.ts';
import { pauseLocal, resumeLocal } from './process/freeze.ts';
import { isAlive } from './process/process-identity.ts';
import type { LaunchSpec } from './process/launch.ts';
import type { Readiness } from './readiness.ts';
import { pollUntil } from './poll.ts';
import { readQuorumView } from './kafka-cluster/quorum-state.ts';
import { isKafkaNodeName, resolveKafkaBrokers } from './kafka-cluster/cluster-shape.ts';
import {
  describePartitionLeaders,
  type PartitionLeader,
} from './kafka-cluster/partition-leaders.ts';
import { folderBytes, leftoverStacks, stackFolders, type PrunedStack } from './prune.ts';
import { listStackNames, readState, stackDir, writeState, type StackState } from './state-file.ts';
import type { ServerName, UpOptions } from './up-options.ts';

export interface ComponentStatus {
  readonly name: string;
  readonly kind: ComponentRecord['kind'];
  readonly running: boolean;
  /** Frozen by `pause` (SIGSTOP) until `resume`: running, answering nothing. */
  readonly paused: boolean;
  readonly pid: number | undefined;
  readonly endpoints: Readonly<Record<string, string>>;
  readonly logFile: string | undefined;
}

/** A process the stack should run and supervise like its servers (the services' roles). */
export interface ProcessComponent {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly readiness: Readiness;
  readonly readyTimeoutMs?: number;
  readonly endpoints?: Readonly<Record<string, string>>;
}

/**
 * A running set of components (PostgreSQL, Kafka, service roles) whose pids, ports and logs
 * live in `.stack/<name>/state.json`, so any shell can inspect, kill or restart them.
 * Every control re-reads that file first: another shell may have changed it.
 */
export class Stack {
  readonly name: string;
  readonly #env: NodeJS.ProcessEnv;

  private constructor(name: string, env: NodeJS.ProcessEnv) {
    this.name = name;
    this.#env = env;
  }

  /**
   * Starts (or resumes, keeping data) the named stack and waits until every server is ready.
   * The provider is STACK_PROVIDER, else `docker` when a Docker engine answers, else `local`;
   * a stack that exists keeps the provider it was created with.
   */
  static async up(options: UpOptions = {}): Promise<Stack> {
    const env = options.env ?? process.env;
    const name = options.name ?? 'dev';
    const servers = options.servers ?? ['postgres', 'kafka'];
    const kafkaBrokers = resolveKafkaBrokers(options.kafkaBrokers, env);
    const existing = readState(name, env);
    const provider = await providerOf(name, existing, env);
    const dir = stackDir(name, env);
    const components: Record<string, ComponentRecord> = { ...existing?.components };
    for (const server of servers) {
      if (Object.keys(components).some((component) => serverOf(component) === server)) continue;
      const kafkaAddresses = Object.values(components)
        .filter((record) => isKafkaNodeName(record.name))
        .flatMap((record) => (record.endpoints['brokers'] ?? '').split(','));
      if (server === 'connect' && kafkaAddresses.length === 0) {
        throw new InfraError('UNSUPPORTED', 'Kafka Connect needs the stack to run Kafka', {
          hint: "list 'kafka' before 'connect' in servers",
        });
      }
      const context = { name, dir, options, kafkaBrokers, kafkaAddresses, env };
      for (const record of await defineServer(provider, server, context)) {
        components[record.name] = record;
      }
    }
    writeState(
      {
        name,
        provider,
        createdAt: existing?.createdAt ?? new Date().toISOString(),
        ownerPid: options.detached ? undefined : process.pid,
        components,
      },
      env,
    );
    const stack = new Stack(name, env);
    // Servers start side by side: Kafka's JVM takes seconds, PostgreSQL a fraction of one,
    // and the nodes of a Kafka cluster only become ready together (a quorum of voters).
    const toStart = Object.keys(components).filter((component) => {
      const server = serverOf(component);
      return server !== undefined && servers.includes(server);
    });
    // Every start settles before a failure is thrown: a node still starting when another
    // server failed must reach the state file (pid and all), or `down` could not stop it.
    // Kafka Connect last: a worker that cannot reach Kafka at start-up gives up.
    const startAll = async (names: readonly string[]) => {
      const started = await Promise.allSettled(
        names.map((component) =>
          provider === 'external'
            ? awaitExternal(stack.#record(component))
            : stack.start(component),
        ),
      );
      const failure = started.find((result) => result.status === 'rejected');
      if (failure) throw failure.reason;
    };
    await startAll(toStart.filter((component) => component !== 'connect'));
    await startAll(toStart.filter((component) => component === 'connect'));
    return stack;
  }

  /** Attaches to a stack started elsewhere (another shell, the test's global setup). */
  static open(name = 'dev', env: NodeJS.ProcessEnv = process.env): Stack {
    if (!readState(name, env)) {
      throw new InfraError('NO_STACK', `no stack named "${name}" is running`, {
        hint: 'start one with `pnpm stack up`',
      });
    }
    return new Stack(name, env);
  }

  /** The stack of that name when its state file exists; undefined when there is none. */
  static openIfExists(name = 'dev', env: NodeJS.ProcessEnv = process.env): Stack | undefined {
    return readState(name, env) ? new Stack(name, env) : undefined;
  }

  /**
   * Stops the leftovers of crashed runs: stacks owned by a process that no longer exists.
   * Returns their names.
   */
  static async reapOrphans(env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
    const reaped: string[] = [];
    for (const name of listStackNames(env)) {
      const state = readState(name, env);
      if (state?.ownerPid === undefined || isAlive({ pid: state.ownerPid, startTime: undefined }))
        continue;
      try {
        await new Stack(name, env).down();
        reaped.push(name);
      } catch (error) {
        // Another process brought it down at the same moment: nothing left to reap.
        if (!(error instanceof InfraError && error.code === 'NO_STACK')) throw error;
      }
    }
    return reaped;
  }

  /**
   * Removes the folders of stacks that are not running (a failed test run keeps its stack's
   * logs and data for a post-mortem), with their containers and PostgreSQL's data wherever it
   * lives. A stack whose owner or any of whose components still runs is left alone.
   * Returns what was removed and the bytes that gave back.
   */
  static async prune(env: NodeJS.ProcessEnv = process.env): Promise<PrunedStack[]> {
    const pruned: PrunedStack[] = [];
    for (const name of leftoverStacks(env)) {
      const state = readState(name, env);
      if (!state) continue;
      const bytes = stackFolders(state, env).reduce((total, dir) => total + folderBytes(dir), 0);
      await new Stack(name, env).down();
      pruned.push({ name, bytes });
    }
    return pruned;
  }

  get state(): StackState {
    const state = readState(this.name, this.#env);
    if (!state)
      throw new InfraError('NO_STACK', `stack "${this.name}" is gone (was it brought down?)`);
    return state;
  }

  /** Connection string to a database on the stack's PostgreSQL. */
  postgresUrl(database = 'postgres'): string {
    const url = new URL(this.#record('postgres').endpoints['url'] ?? '');
    url.pathname = `/${database}`;
    return url.toString();
  }

  /**
   * Connection string to a database through the stack's PgBouncer (see `addPgBouncer`): the
   * same database, pooled in transaction mode.
   */
  pooledPostgresUrl(database = 'postgres'): string {
    const url = new URL(this.#record(PGBOUNCER_COMPONENT).endpoints['url'] ?? '');
    url.pathname = `/${database}`;
    return url.toString();
  }

  /**
   * Starts PgBouncer in transaction mode in front of the stack's PostgreSQL (local, in a
   * container or external), on a free port, its config and log in the stack's folder; one
   * already added is only started. `pooledPostgresUrl` names its databases; `kill`, `stop` and
   * `start` work on it as on any component, and `down` stops it after the roles.
   */
  async addPgBouncer(options: { poolSize?: number } = {}): Promise<void> {
    if (!(PGBOUNCER_COMPONENT in this.state.components)) {
      this.#update(
        PGBOUNCER_COMPONENT,
        definePgBouncer({
          dir: path.join(stackDir(this.name, this.#env), PGBOUNCER_COMPONENT),
          port: await findFreePort(),
          postgresUrl: this.postgresUrl(),
          poolSize: options.poolSize ?? 20,
          binary: findPgBouncer(this.#env),
        }),
      );
    }
    await this.start(PGBOUNCER_COMPONENT);
  }

  /** Kafka Connect's REST API (the stack must run Kafka Connect: see `addServer`). */
  get connectUrl(): string {
    return this.#record('connect').endpoints['url'] ?? '';
  }

  /** Kafka's components: `kafka`, or `kafka-1` … `kafka-N` for a cluster. */
  get kafkaNodes(): string[] {
    const nodes = Object.keys(this.state.components).filter(isKafkaNodeName);
    if (nodes.length === 0) this.#record('kafka');
    return nodes.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  }

  /**
   * The node that leads the controller quorum, as the running nodes of the newest epoch see it;
   * undefined during an election. Local provider: read from the nodes' data folders.
   */
  quorumLeader(): string | undefined {
    const views = this.kafkaNodes
      .filter((node) => this.isRunning(node))
      .map((node) => this.#record(node))
      .flatMap((record) => (record.kind === 'kafka' ? [readQuorumView(record.dataDir)] : []))
      .filter((view) => view !== undefined);
    const newest = Math.max(...views.map((view) => view.leaderEpoch));
    const leaderId = views.find((view) => view.leaderEpoch === newest)?.leaderId;
    return this.kafkaNodes.find(
      (node) =>
        leaderId !== undefined && Number(this.#record(node).endpoints['nodeId']) === leaderId,
    );
  }

  /** Every node's address, running or not: clients find the live ones. */
  get kafkaBrokers(): string[] {
    return this.kafkaNodes.flatMap((node) =>
      (this.#record(node).endpoints['brokers'] ?? '').split(','),
    );
  }

  /**
   * Which node leads each partition of each topic, and which nodes are in sync, as the running
   * nodes report it. Nodes are named as in the stack (`kafka-2`); an empty list when no node runs.
   */
  async partitionLeaders(
    options: {
      timeoutMs?: number;
      /** Nodes not to ask: a frozen (SIGSTOPped) node accepts connections and answers nothing. */
      without?: readonly string[];
    } = {},
  ): Promise<PartitionLeader[]> {
    const running = this.kafkaNodes.filter(
      (node) => !options.without?.includes(node) && this.isRunning(node),
    );
    const nodeNames = new Map<number, string>();
    for (const node of this.kafkaNodes) {
      nodeNames.set(Number(this.#record(node).endpoints['nodeId'] ?? 1), node);
    }
    const brokers = running.flatMap((node) =>
      (this.#record(node).endpoints['brokers'] ?? '').split(','),
    );
    if (brokers.length === 0) return [];
    const timeoutMs = options.timeoutMs ?? 5000;
    // Once the controller quorum is lost (two of three nodes stopped), the survivor's metadata
    // keeps listing the stopped nodes, and the client may send a request to one of them until
    // its retries run out. A fresh client, asked again, picks anew.
    return pollUntil(() => describePartitionLeaders({ brokers, nodeNames, timeoutMs }), {
      timeoutMs: 3 * timeoutMs,
      intervalMs: 200,
      description: 'the partition leaders',
    });
  }

  /** Creates the database if it does not exist yet; returns its connection string. */
  async createDatabase(database: string): Promise<string> {
    const client = new pg.Client({ connectionString: this.postgresUrl() });
    await client.connect();
    try {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
      if (found.rowCount === 0)
        await client.query(`CREATE DATABASE "${database.replaceAll('"', '""')}"`);
    } finally {
      await client.end();
    }
    return this.postgresUrl(database);
  }

  /**
   * Adds a server the stack was brought up without (Kafka Connect, for the CDC relay) and starts
   * it; one it already has is only started. The stack keeps its owner.
   */
  async addServer(server: ServerName, options: Pick<UpOptions, 'ports'> = {}): Promise<void> {
    const state = this.state;
    const present = Object.keys(state.components).filter((name) => serverOf(name) === server);
    if (present.length === 0) {
      const records = await defineServer(state.provider, server, {
        name: this.name,
        dir: stackDir(this.name, this.#env),
        options,
        kafkaBrokers: this.kafkaNodes.length,
        kafkaAddresses: this.kafkaBrokers,
        env: this.#env,
      });
      for (const record of records) this.#update(record.name, record);
      present.push(...records.map((record) => record.name));
    }
    for (const name of present) {
      if (state.provider === 'external') await awaitExternal(this.#record(name));
      else await this.start(name);
    }
  }

  /**
   * Changes the environment a process component starts with, from its next start on: the
   * state file keeps it, so a start from any shell (or the dashboard) uses it. Each variable is
   * set, or removed when its value is `undefined` (the process then inherits it, if whoever
   * starts it has it).
   */
  setEnv(component: string, changes: Readonly<Record<string, string | undefined>>): void {
    const record = this.#record(component);
    if (record.kind !== 'process') {
      throw new InfraError(
        'UNSUPPORTED',
        `${component} is a server: only a process component (a service role) takes variables`,
      );
    }
    const env = Object.fromEntries(
      Object.entries({ ...record.launch.env, ...changes }).filter(
        (entry): entry is [string, string] => entry[1] !== undefined,
      ),
    );
    this.#update(component, { ...record, launch: { ...record.launch, env } });
  }

  /** Adds a supervised process (a service role) and starts it. */
  async addProcess(component: ProcessComponent): Promise<void> {
    const logFile = path.join(stackDir(this.name, this.#env), 'logs', `${component.name}.log`);
    const launch: LaunchSpec = {
      command: component.command,
      args: component.args,
      cwd: component.cwd,
      env: component.env,
      logFile,
    };
    this.#update(component.name, {
      name: component.name,
      kind: 'process',
      launch,
      readiness: component.readiness,
      readyTimeoutMs: component.readyTimeoutMs ?? 30_000,
      stopSignal: 'SIGTERM',
      endpoints: component.endpoints ?? {},
      ports: {},
    });
    await this.start(component.name);
  }

  status(): ComponentStatus[] {
    return Object.values(this.state.components).map((record) => {
      const { running, pid } = controlsFor(record).status(this.#env);
      return {
        name: record.name,
        kind: record.kind,
        running,
        paused: running && record.pausedAt !== undefined,
        pid,
        endpoints: record.endpoints,
        logFile: logFileOf(record),
      };
    });
  }

  isRunning(component: string): boolean {
    const record = this.#record(component);
    return controlsFor(record).status(this.#env).running;
  }

  pid(component: string): number | undefined {
    const record = this.#record(component);
    return controlsFor(record).status(this.#env).pid;
  }

  logFile(component: string): string | undefined {
    return logFileOf(this.#record(component));
  }

  async start(component: string): Promise<void> {
    const record = this.#record(component);
    this.#update(component, await controlsFor(record).start());
  }

  async stop(component: string): Promise<void> {
    const record = this.#thawed(component);
    this.#update(component, await controlsFor(record).stop());
  }

  /**
   * SIGKILL: what a crash, the OOM killer or `kill -9` does. Data stays. Returns whether a live
   * process was signalled: killing one that is already dead (or mid-restart) is not a fault.
   */
  async kill(component: string): Promise<boolean> {
    const record = this.#thawed(component);
    const controls = controlsFor(record);
    const wasRunning = controls.status(this.#env).running;
    this.#update(component, await controls.kill());
    return wasRunning;
  }

  async restart(component: string): Promise<void> {
    await this.stop(component);
    await this.start(component);
  }

  /** Starts the component again with empty storage: "Kafka lost its data". */
  async wipe(component: string): Promise<void> {
    const record = this.#thawed(component);
    if (record.kind === 'kafka' && this.kafkaNodes.length > 1) {
      this.#update(component, await controlsFor(record).kill());
      await this.#untilQuorumForgets(component);
    }
    this.#update(component, await controlsFor(this.#record(component)).wipe());
  }

  /**
   * A voter that comes back with empty storage while the others still follow it as leader
   * hears of itself as leader of an epoch it never saw, and KRaft stops the JVM
   * (IllegalStateException in the raft IO thread). So the wiped node starts again only once no
   * surviving voter names it leader: they time out its fetches and elect another (seconds).
   */
  async #untilQuorumForgets(component: string): Promise<void> {
    const nodeId = Number(this.#record(component).endpoints['nodeId']);
    const survivors = this.kafkaNodes
      .filter((node) => node !== component && this.isRunning(node))
      .map((node) => this.#record(node))
      .flatMap((record) => (record.kind === 'kafka' ? [record.dataDir] : []));
    await pollUntil(
      () => survivors.every((dataDir) => readQuorumView(dataDir)?.leaderId !== nodeId),
      {
        timeoutMs: 60_000,
        intervalMs: 100,
        description: `the quorum to elect a leader other than ${component}`,
      },
    );
  }

  /**
   * SIGSTOP to the component's process group: a gray failure, not a crash. The process keeps
   * its sockets, locks and sessions and answers nothing until `resume`; `status` shows it
   * paused. Local provider only.
   */
  pause(component: string): void {
    this.#update(component, pauseLocal(this.#record(component)));
  }

  /** SIGCONT: a paused component (or one that froze itself) goes on where it stopped. */
  resume(component: string): void {
    this.#update(component, resumeLocal(this.#record(component)));
  }

  /**
   * Stops every component (roles first, servers last), removes the stack's containers and
   * deletes the stack's folder.
   */
  async down(options: { keepFiles?: boolean } = {}): Promise<void> {
    const records = Object.values(this.state.components);
    const remove = async (name: string): Promise<void> => {
      this.#update(name, await controlsFor(this.#thawed(name)).remove());
    };
    // A local server whose files go with the stack has nothing to shut down cleanly for: a
    // controlled shutdown and a checkpoint would only write what is deleted a moment later.
    const discard = async (name: string): Promise<void> => {
      const record = this.#thawed(name);
      if (record.kind === 'postgres' || record.kind === 'kafka' || record.kind === 'connect')
        this.#update(name, await controlsFor(record).kill());
      await remove(name);
    };
    const end = options.keepFiles ? remove : discard;
    // The roles and Kafka Connect (a process or a container) first, while the servers they
    // use still answer; side by side, each within its own stop timeout.
    const clients = records.filter(
      (r) =>
        (r.kind === 'process' && r.name !== PGBOUNCER_COMPONENT) || serverOf(r.name) === 'connect',
    );
    await Promise.all(
      clients.map(({ name }) => (serverOf(name) === 'connect' ? end(name) : remove(name))),
    );
    // The pooler once the roles that use it have stopped, before the PostgreSQL behind it.
    const poolers = records.filter((r) => r.name === PGBOUNCER_COMPONENT);
    await Promise.all(poolers.map(({ name }) => remove(name)));
    // Kafka's nodes together: stopped one after another, the last one has lost its controller
    // quorum and waits out its whole stop timeout for a controlled shutdown nobody can grant.
    const kafkaNodes = records.filter((r) => !clients.includes(r) && isKafkaNodeName(r.name));
    await Promise.all(kafkaNodes.map(({ name }) => end(name)));
    const stopped = [...clients, ...poolers, ...kafkaNodes];
    for (const { name } of records.filter((r) => !stopped.includes(r))) await end(name);
    await removeNetworks(records.filter((record) => record.kind === 'container'));
    if (options.keepFiles) {
      // Kept for a post-mortem: no longer owned, so reapOrphans() leaves the files alone.
      writeState({ ...this.state, ownerPid: undefined }, this.#env);
    } else {
      // PostgreSQL's data may live outside the stack's folder (see definePostgres).
      for (const folder of stackFolders(this.state, this.#env)) {
        rmSync(folder, { recursive: true, force: true });
      }
    }
  }

  #record(component: string): ComponentRecord {
    const record = this.state.components[component];
    if (!record) {
      const known = Object.keys(this.state.components).join(', ');
      throw new InfraError(
        'UNKNOWN_COMPONENT',
        `stack "${this.name}" has no component "${component}"`,
        {
          hint: `known components: ${known}`,
        },
      );
    }
    return record;
  }

  /** The component's record, resumed first if it was paused: a frozen process ignores SIGTERM. */
  #thawed(component: string): ComponentRecord {
    const record = this.#record(component);
    if (record.pausedAt === undefined) return record;
    const resumed = resumeLocal(record);
    this.#update(component, resumed);
    return resumed;
  }

  #update(component: string, record: ComponentRecord): void {
    const state = this.state;
    writeState({ ...state, components: { ...state.components, [component]: record } }, this.#env);
  }
}

/** Which server a component belongs to (Kafka's nodes all belong to `kafka`); roles to none. */
function serverOf(component: string): ServerName | undefined {
  if (component === 'postgres') return 'postgres';
  if (component === 'connect') return 'connect';
  return isKafkaNodeName(component) ? 'kafka' : undefined;
}

/** A stack that exists keeps its provider; asking for another one is a mistake worth a message. */
async function providerOf(
  name: string,
  existing: StackState | undefined,
  env: NodeJS.ProcessEnv,
): Promise<ProviderName> {
  if (!existing) return chooseProvider(env);
  const wanted = env['STACK_PROVIDER'];
  if (wanted && wanted !== existing.provider) {
    throw new InfraError(
      'UNSUPPORTED',
      `stack "${name}" runs on the ${existing.provider} provider, not ${wanted}`,
      { hint: `bring it down first (\`pnpm stack down --name ${name}\`), or unset STACK_PROVIDER` },
    );
  }
  return existing.provider;
}
