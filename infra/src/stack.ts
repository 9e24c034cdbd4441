import { rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { chooseProvider, type ProviderName } from './choose-provider.ts';
import { driverFor } from './component-driver.ts';
import { defineServer } from './define-server.ts';
import { InfraError } from './errors.ts';
import { awaitExternal } from './external/external-components.ts';
import { isAlive } from './process/process-identity.ts';
import type { LaunchSpec } from './process/launch.ts';
import {
  listStackNames,
  readState,
  stackDir,
  writeState,
  type ComponentRecord,
  type Readiness,
  type StackState,
} from './state-file.ts';

export type ServerName = 'postgres' | 'kafka';

export interface UpOptions {
  /** Stacks are named so that several can run side by side; `dev` is the CLI's default. */
  readonly name?: string;
  readonly servers?: readonly ServerName[];
  /** A detached stack outlives this process (CLI `up --detach`); otherwise this process owns it. */
  readonly detached?: boolean;
  /** Fixed ports (the dev stack); free ports are picked when absent. */
  readonly ports?: {
    readonly postgres?: number;
    readonly kafka?: number;
    readonly kafkaController?: number;
  };
  readonly kafkaHeapMb?: number;
  readonly env?: NodeJS.ProcessEnv;
}

export interface ComponentStatus {
  readonly name: string;
  readonly kind: ComponentRecord['kind'];
  readonly running: boolean;
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
    const existing = readState(name, env);
    const provider = await providerOf(name, existing, env);
    const dir = stackDir(name, env);
    const components: Record<string, ComponentRecord> = { ...existing?.components };
    for (const server of servers) {
      components[server] ??= await defineServer(provider, server, { name, dir, options, env });
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
    // Servers start side by side: Kafka's JVM takes seconds, PostgreSQL a fraction of one.
    await Promise.all(
      servers.map((server) =>
        provider === 'external' ? awaitExternal(stack.#record(server)) : stack.start(server),
      ),
    );
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

  get kafkaBrokers(): string[] {
    return (this.#record('kafka').endpoints['brokers'] ?? '').split(',');
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
      const { running, pid } = driverFor(record).status(record, this.#env);
      return {
        name: record.name,
        kind: record.kind,
        running,
        pid,
        endpoints: record.endpoints,
        logFile: record.launch?.logFile,
      };
    });
  }

  isRunning(component: string): boolean {
    const record = this.#record(component);
    return driverFor(record).status(record, this.#env).running;
  }

  pid(component: string): number | undefined {
    const record = this.#record(component);
    return driverFor(record).status(record, this.#env).pid;
  }

  logFile(component: string): string | undefined {
    return this.#record(component).launch?.logFile;
  }

  async start(component: string): Promise<void> {
    const record = this.#record(component);
    this.#update(component, await driverFor(record).start(record));
  }

  async stop(component: string): Promise<void> {
    const record = this.#record(component);
    this.#update(component, await driverFor(record).stop(record));
  }

  /** SIGKILL: what a crash, the OOM killer or `kill -9` does. Data stays. */
  async kill(component: string): Promise<void> {
    const record = this.#record(component);
    this.#update(component, await driverFor(record).kill(record));
  }

  async restart(component: string): Promise<void> {
    await this.stop(component);
    await this.start(component);
  }

  /** Starts the component again with empty storage: "Kafka lost its data". */
  async wipe(component: string): Promise<void> {
    const record = this.#record(component);
    this.#update(component, await driverFor(record).wipe(record));
  }

  /**
   * Stops every component (roles first, servers last), removes the stack's containers and
   * deletes the stack's folder.
   */
  async down(options: { keepFiles?: boolean } = {}): Promise<void> {
    const records = Object.values(this.state.components);
    const order = [
      ...records.filter((r) => r.kind === 'process'),
      ...records.filter((r) => r.kind !== 'process'),
    ];
    for (const record of order) {
      this.#update(record.name, await driverFor(record).remove(record));
    }
    if (options.keepFiles) {
      // Kept for a post-mortem: no longer owned, so reapOrphans() leaves the files alone.
      writeState({ ...this.state, ownerPid: undefined }, this.#env);
    } else {
      const dir = stackDir(this.name, this.#env);
      // PostgreSQL's data may live outside the stack's folder (see definePostgres).
      for (const record of records) {
        if (record.dataDir && !record.dataDir.startsWith(`${dir}${path.sep}`)) {
          rmSync(path.dirname(record.dataDir), { recursive: true, force: true });
        }
      }
      rmSync(dir, { recursive: true, force: true });
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

  #update(component: string, record: ComponentRecord): void {
    const state = this.state;
    writeState({ ...state, components: { ...state.components, [component]: record } }, this.#env);
  }
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
