import { rmSync } from 'node:fs';
import type {
  ComponentRecord,
  ContainerRecord,
  ExternalRecord,
  LocalRecord,
} from './component-record.ts';
import {
  containerStatus,
  killContainer,
  removeContainer,
  startContainer,
  stopContainer,
  wipeContainer,
} from './docker/docker-driver.ts';
import { InfraError } from './errors.ts';
import { refuseChaos } from './external/external-components.ts';
import { addressesOf, someAddressAnswers } from './external/reachable.ts';
import { isRunning, killLocal, startLocal, stopLocal } from './process/local-driver.ts';

/** The controls of one kind of component, for records of that kind. */
interface ComponentDriver<R extends ComponentRecord> {
  start(record: R): Promise<R>;
  /** Graceful stop; data stays. */
  stop(record: R): Promise<R>;
  /** SIGKILL; data stays. */
  kill(record: R): Promise<R>;
  /** Start again with empty storage. */
  wipe(record: R): Promise<R>;
  /** For `down`: stop, and remove what only the stack uses (a container). */
  remove(record: R): Promise<R>;
  status(record: R, env: NodeJS.ProcessEnv): { running: boolean; pid: number | undefined };
}

/** The controls of one component, bound to its record; each returns the record as it is now. */
export interface ComponentControls {
  start(): Promise<ComponentRecord>;
  stop(): Promise<ComponentRecord>;
  kill(): Promise<ComponentRecord>;
  wipe(): Promise<ComponentRecord>;
  remove(): Promise<ComponentRecord>;
  status(env: NodeJS.ProcessEnv): { running: boolean; pid: number | undefined };
}

const localDriver: ComponentDriver<LocalRecord> = {
  start: startLocal,
  stop: stopLocal,
  kill: killLocal,
  async wipe(record) {
    if (record.kind === 'process') {
      throw new InfraError('UNSUPPORTED', `${record.name} has no data folder to wipe`);
    }
    if (record.kind === 'connect') {
      throw new InfraError(
        'UNSUPPORTED',
        `${record.name} keeps its state in Kafka topics (connect-configs, connect-offsets, connect-status): wipe kafka`,
      );
    }
    const killed = await killLocal(record);
    rmSync(record.dataDir, { recursive: true, force: true });
    return startLocal(killed);
  },
  remove: stopLocal,
  status(record) {
    const running = isRunning(record);
    return { running, pid: running ? record.process?.pid : undefined };
  },
};

const dockerDriver: ComponentDriver<ContainerRecord> = {
  start: startContainer,
  stop: stopContainer,
  kill: killContainer,
  wipe: wipeContainer,
  remove: removeContainer,
  status: containerStatus,
};

const externalDriver: ComponentDriver<ExternalRecord> = {
  start: async (record) => refuseChaos(record, 'start'),
  stop: async (record) => refuseChaos(record, 'stop'),
  kill: async (record) => refuseChaos(record, 'kill'),
  wipe: async (record) => refuseChaos(record, 'wipe'),
  // Someone else's server: `down` only forgets it.
  remove: async (record) => record,
  status(record) {
    const { readiness } = record;
    const running =
      readiness.type === 'postgres'
        ? someAddressAnswers(addressesOf({ url: readiness.url }))
        : readiness.type === 'kafka'
          ? someAddressAnswers(addressesOf({ brokers: readiness.brokers }))
          : false;
    return { running, pid: undefined };
  },
};

function bind<R extends ComponentRecord>(driver: ComponentDriver<R>, record: R): ComponentControls {
  return {
    start: () => driver.start(record),
    stop: () => driver.stop(record),
    kill: () => driver.kill(record),
    wipe: () => driver.wipe(record),
    remove: () => driver.remove(record),
    status: (env) => driver.status(record, env),
  };
}

/** The controls of a component, picked by its kind: `Stack` drives every component through these. */
export function controlsFor(record: ComponentRecord): ComponentControls {
  switch (record.kind) {
    case 'postgres':
    case 'kafka':
    case 'connect':
    case 'process':
      return bind(localDriver, record);
    case 'container':
      return bind(dockerDriver, record);
    case 'external':
      return bind(externalDriver, record);
  }
}
