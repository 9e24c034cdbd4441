/**
 * A client built on first use. `close()` is final on @platformatic/kafka, so closing forgets
 * the client and the next use builds a new one: a `connect` after a `disconnect` works.
 */
export class LazyClient<Client extends { close(): Promise<unknown> }> {
  readonly #build: () => Client;
  #client: Client | undefined;

  constructor(build: () => Client) {
    this.#build = build;
  }

  /** The client, built now when there is none. */
  get(): Client {
    return (this.#client ??= this.#build());
  }

  /** Closes the client, if there is one; it is forgotten even when closing fails. */
  async close(): Promise<void> {
    const closing = this.#client;
    this.#client = undefined;
    await closing?.close().catch(() => undefined);
  }
}
