import { consumerFetchesChannel } from '@platformatic/kafka';

/**
 * Counts the fetch requests of one consumer that Kafka has not answered yet. The client cannot
 * cancel a fetch: an answer to one sent before a position was moved is pushed into the stream
 * after the move (and moves the position on past it), so a move is safe only once none is in
 * flight. The client tells of its fetches only on its diagnostics channel.
 */
export class FetchesInFlight {
  readonly #client: unknown;
  #count = 0;
  #waiters: (() => void)[] = [];
  readonly #handlers = {
    end: (): void => undefined,
    asyncStart: (): void => undefined,
    error: (): void => undefined,
    start: (message: unknown): void => {
      if (this.#mine(message)) this.#count += 1;
    },
    asyncEnd: (message: unknown): void => {
      if (!this.#mine(message)) return;
      this.#count = Math.max(0, this.#count - 1);
      if (this.#count === 0) for (const wake of this.#waiters.splice(0)) wake();
    },
  };

  constructor(client: unknown) {
    this.#client = client;
    consumerFetchesChannel.subscribe(this.#handlers);
  }

  /** True once no fetch is in flight; false when `timeoutMs` passed first. */
  async settled(timeoutMs: number): Promise<boolean> {
    if (this.#count === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    let wake: () => void = () => undefined;
    const result = await Promise.race([
      new Promise<boolean>((resolve) => {
        wake = () => resolve(true);
        this.#waiters.push(wake);
      }),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    this.#waiters = this.#waiters.filter((one) => one !== wake);
    return result;
  }

  close(): void {
    consumerFetchesChannel.unsubscribe(this.#handlers);
  }

  #mine(message: unknown): boolean {
    return (message as { client?: unknown }).client === this.#client;
  }
}
