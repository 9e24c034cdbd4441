import { randomUUID } from 'node:crypto';

export interface LoadStatus {
  readonly running: boolean;
  readonly ordersPerSecond: number;
  readonly sent: number;
  /** Requests not answered 201 (the api down, a timeout). */
  readonly failed: number;
}

/**
 * A steady stream of `POST /orders` at a chosen rate, each with its own idempotency key, the
 * way clients would send them. Requests that fail are counted, not retried: the page shows
 * what a client would have seen.
 */
export class LoadGenerator {
  readonly #orderApiUrl: string;
  #timer: NodeJS.Timeout | undefined;
  #ordersPerSecond = 0;
  #sent = 0;
  #failed = 0;
  readonly #inFlight = new Set<Promise<void>>();

  constructor(orderApiUrl: string) {
    this.#orderApiUrl = orderApiUrl;
  }

  get status(): LoadStatus {
    return {
      running: this.#timer !== undefined,
      ordersPerSecond: this.#ordersPerSecond,
      sent: this.#sent,
      failed: this.#failed,
    };
  }

  /** Starts (or changes the rate of) the stream. */
  start(ordersPerSecond: number): void {
    this.stop();
    this.#ordersPerSecond = ordersPerSecond;
    let due = 0;
    const tickMs = 100;
    this.#timer = setInterval(() => {
      due += (ordersPerSecond * tickMs) / 1000;
      // Never more requests in flight than a second's worth: a slow api is not buried.
      while (due >= 1 && this.#inFlight.size < Math.max(1, ordersPerSecond)) {
        due -= 1;
        this.#send();
      }
      due = Math.min(due, ordersPerSecond);
    }, tickMs);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Stops and waits for the requests still in flight. */
  async close(): Promise<void> {
    this.stop();
    await Promise.all(this.#inFlight);
  }

  #send(): void {
    const request = fetch(`${this.#orderApiUrl}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({
        customerId: `load-${randomUUID().slice(0, 8)}`,
        amount: 100 + Math.floor(Math.random() * 9900),
        currency: 'EUR',
      }),
      signal: AbortSignal.timeout(5000),
    })
      .then((response) => {
        this.#sent += 1;
        if (response.status !== 201) this.#failed += 1;
      })
      .catch(() => {
        this.#sent += 1;
        this.#failed += 1;
      })
      .finally(() => this.#inFlight.delete(request));
    this.#inFlight.add(request);
  }
}
