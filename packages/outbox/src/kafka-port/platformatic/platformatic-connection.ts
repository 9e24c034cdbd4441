/** Where and as whom the adapter's clients connect; each producer, consumer and admin has its own. */
export interface PlatformaticConnection {
  readonly clientId: string;
  /** host:port of the bootstrap brokers. */
  readonly brokers: readonly string[];
  /** Per-request timeout, in ms (the client's default when left out). */
  readonly timeoutMs?: number | undefined;
}
