import { rmSync } from 'node:fs';
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
import type { ComponentRecord } from './state-file.ts';

/** The controls of one kind of component; `Stack` picks the driver by the record's kind. */
export interface ComponentDriver {
  start(record: ComponentRecord): Promise<ComponentRecord>;
  /** Graceful stop; data stays. */
  stop(record: ComponentRecord): Promise<ComponentRecord>;
  /** SIGKILL; data stays. */
  kill(record: ComponentRecord): Promise<ComponentRecord>;
  /** Start again with empty storage. */
  wipe(record: ComponentRecord): Promise<ComponentRecord>;
  /** For `down`: stop, and remove what only the stack uses (a container). */
  remove(record: ComponentRecord): Promise<ComponentRecord>;
  status(
    record: ComponentRecord,
    env: NodeJS.ProcessEnv,
  ): { running: boolean; pid: number | undefined };
}

const localDriver: ComponentDriver = {
  start: startLocal,
  stop: stopLocal,
  kill: killLocal,
  async wipe(record) {
    if (!record.dataDir || !record.prepare) {
      throw new InfraError('UNSUPPORTED', `${record.name} has no data folder to wipe`);
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

const dockerDriver: ComponentDriver = {
  start: startContainer,
  stop: stopContainer,
  kill: killContainer,
  wipe: wipeContainer,
  remove: removeContainer,
  status: containerStatus,
};

const externalDriver: ComponentDriver = {
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

export function driverFor(record: ComponentRecord): ComponentDriver {
  switch (record.kind) {
    case 'postgres':
    case 'kafka':
    case 'process':
      return localDriver;
    case 'container':
      return dockerDriver;
    case 'external':
      return externalDriver;
  }
}
