/** Where and as whom the adapter's clients connect; each producer, consumer and admin has its own. */
export interface PlatformaticConnection {
  readonly clientId: string;
  /** host:port of the bootstrap brokers. */
  readonly brokers: readonly string[];
  /** Per-request timeout, in ms (the client's default when left out). */
  readonly timeoutMs?: number | undefined;
}

/** The options every client of the adapter is built with: who it is, where, and its timeout. */
export function clientOptions(connection: PlatformaticConnection) {
  return {
    clientId: connection.clientId,
    bootstrapBrokers: [...connection.brokers],
    ...(connection.timeoutMs === undefined ? {} : { timeout: connection.timeoutMs }),
  };
}
