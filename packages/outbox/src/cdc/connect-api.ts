import { OutboxError } from '../errors.ts';

/** The state Kafka Connect reports for a connector and each of its tasks. */
export interface ConnectorStatus {
  readonly connector: { readonly state: string; readonly trace?: string };
  readonly tasks: readonly {
    readonly id: number;
    readonly state: string;
    readonly trace?: string;
  }[];
}

interface CallOptions {
  readonly body?: object;
  /** A 404 (no such connector) is an answer, not an error. */
  readonly missingIsUndefined?: boolean;
  readonly timeoutMs?: number;
}

/** Writes may wait for a rebalance; a status is read from memory. */
const CALL_TIMEOUT_MS = 30_000;
/** A worker that has not answered a status in this long is frozen or gone, as far as we can tell. */
const STATUS_TIMEOUT_MS = 10_000;

/** A small client of Kafka Connect's REST API: the calls the CDC relay makes. */
export class ConnectApi {
  readonly #baseUrl: string;

  constructor(baseUrl: string) {
    this.#baseUrl = baseUrl.replace(/\/+$/, '');
  }

  /** Creates the connector, or changes its config: PUT is idempotent. */
  async putConfig(name: string, config: Readonly<Record<string, string>>): Promise<void> {
    await this.#call('PUT', `${connectorPath(name)}/config`, { body: config });
  }

  /** Undefined when there is no such connector. */
  status(name: string): Promise<ConnectorStatus | undefined> {
    return this.#call<ConnectorStatus>('GET', `${connectorPath(name)}/status`, {
      missingIsUndefined: true,
      timeoutMs: STATUS_TIMEOUT_MS,
    });
  }

  /** Restarts the connector's failed parts (its failed tasks, or itself). */
  async restartFailed(name: string): Promise<void> {
    await this.#call('POST', `${connectorPath(name)}/restart?includeTasks=true&onlyFailed=true`);
  }

  async pause(name: string): Promise<void> {
    await this.#call('PUT', `${connectorPath(name)}/pause`);
  }

  async resume(name: string): Promise<void> {
    await this.#call('PUT', `${connectorPath(name)}/resume`);
  }

  /** Stops the connector and its tasks, keeping its config, so its offsets can be deleted. */
  async stop(name: string): Promise<void> {
    await this.#call('PUT', `${connectorPath(name)}/stop`);
  }

  /**
   * Deletes the source offsets Kafka Connect keeps for a stopped connector. They outlive the
   * connector: one registered again under the same name would start from them.
   */
  async deleteOffsets(name: string): Promise<void> {
    await this.#call('DELETE', `${connectorPath(name)}/offsets`);
  }

  /** Deletes the connector; no error when it does not exist. */
  async remove(name: string): Promise<void> {
    await this.#call('DELETE', connectorPath(name), { missingIsUndefined: true });
  }

  async #call<T>(method: string, path: string, options: CallOptions = {}): Promise<T | undefined> {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const timeoutMs = options.timeoutMs ?? CALL_TIMEOUT_MS;
    const response = await fetch(`${this.#baseUrl}${path}`, {
      method,
      ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } }),
      signal: AbortSignal.timeout(timeoutMs),
    }).catch((error: unknown) => {
      if (!(error instanceof Error && error.name === 'TimeoutError')) throw error;
      throw new OutboxError(
        'CDC_CONNECT_FAILED',
        `Kafka Connect did not answer ${method} ${path} in ${timeoutMs} ms`,
        { cause: error },
      );
    });
    if (response.status === 404 && options.missingIsUndefined) return undefined;
    const text = await response.text();
    if (!response.ok) {
      throw new OutboxError(
        'CDC_CONNECT_FAILED',
        `Kafka Connect answered ${method} ${path} with ${response.status}: ${text.slice(0, 500)}`,
      );
    }
    return text === '' ? undefined : (JSON.parse(text) as T);
  }
}

function connectorPath(name: string): string {
  return `/connectors/${encodeURIComponent(name)}`;
}

/** The connector and every one of its tasks run. */
export function isConnectorRunning(status: ConnectorStatus): boolean {
  return (
    status.connector.state === 'RUNNING' &&
    status.tasks.length > 0 &&
    status.tasks.every((task) => task.state === 'RUNNING')
  );
}

/** The first lines of the trace of a failed connector or task; undefined when none failed. */
export function connectorFailure(status: ConnectorStatus): string | undefined {
  const failed = [status.connector, ...status.tasks].find((part) => part.state === 'FAILED');
  if (failed === undefined) return undefined;
  return (failed.trace ?? 'no trace').split('\n').slice(0, 5).join('\n');
}
