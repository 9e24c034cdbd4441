import { randomUUID } from 'node:crypto';

export interface LoadOptions {
  readonly baseUrl: string;
  readonly ratePerSecond: number;
  /** One accepted order in `cancelEvery` is cancelled shortly after (0: none). */
  readonly cancelEvery: number;
  /** One order in `failEvery` asks for an amount above the payment limit (0: none). */
  readonly failEvery: number;
  readonly paymentLimit: number;
  /** At most this many requests in flight: a stalled server must not grow an unbounded queue. */
  readonly maxInFlight?: number;
  /**
   * Takes a 503 as the final answer instead of retrying it with the same Idempotency-Key.
   * The PostgreSQL outages set it, so the invariants can show that a 503 wrote nothing.
   */
  readonly unavailableIsFinal?: boolean;
}

export interface AcceptedOrder {
  readonly orderId: string;
  readonly amount: number;
  cancelled: boolean;
}

export interface LoadResult {
  /** Orders that got a 201, keyed by order id. */
  readonly accepted: Map<string, AcceptedOrder>;
  /** Requests whose final answer was not 201 (a 503 while the database was down, …): must leave nothing. */
  readonly refused: number;
  readonly statusCounts: Record<string, number>;
  /** Requests retried with the same Idempotency-Key after a network error or a 503. */
  readonly retries: number;
  /** Create answers the server replayed from an earlier commit of the same Idempotency-Key. */
  readonly replayed: number;
  /** Final answers to cancel requests, by status. */
  readonly cancelStatusCounts: Record<string, number>;
}

type Answer = { status: number; body: unknown; replayed: boolean } | 'network-error';

async function post(url: string, body: unknown, idempotencyKey?: string): Promise<Answer> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    return {
      status: response.status,
      body: text ? (JSON.parse(text) as unknown) : undefined,
      replayed: response.headers.get('idempotent-replayed') === 'true',
    };
  } catch {
    return 'network-error';
  }
}

function orderIdOf(body: unknown): string {
  if (typeof body === 'object' && body !== null && 'id' in body && typeof body.id === 'string')
    return body.id;
  throw new Error(`201 without an order id: ${JSON.stringify(body)}`);
}

/**
 * Creates orders over HTTP at a steady rate while faults are injected. A request that fails
 * on the network is retried with the same Idempotency-Key until it gets an answer, so every
 * order ends either accepted (201) or refused: the suite can then check for phantoms.
 */
export function startLoad(options: LoadOptions): {
  stop(): Promise<LoadResult>;
  acceptedSoFar(): number;
  acceptedIdsSoFar(): string[];
  statusesSoFar(): Readonly<Record<string, number>>;
} {
  const accepted = new Map<string, AcceptedOrder>();
  const statusCounts: Record<string, number> = {};
  const cancelStatusCounts: Record<string, number> = {};
  let refused = 0;
  let retries = 0;
  let replayed = 0;
  let sequence = 0;
  let stopping = false;
  const inFlight = new Set<Promise<void>>();
  const maxInFlight = options.maxInFlight ?? 64;

  const count = (status: number | string): void => {
    statusCounts[status] = (statusCounts[status] ?? 0) + 1;
  };

  async function cancelLater(order: AcceptedOrder): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 300));
    for (;;) {
      const answer = await post(`${options.baseUrl}/orders/${order.orderId}/cancel`, {});
      const final = answer !== 'network-error' && (answer.status < 500 || stopping);
      if (final) cancelStatusCounts[answer.status] = (cancelStatusCounts[answer.status] ?? 0) + 1;
      if (answer !== 'network-error' && answer.status < 500) {
        order.cancelled = answer.status < 300;
        return;
      }
      if (final) return;
      retries += 1;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async function createOrder(n: number): Promise<void> {
    const fails = options.failEvery > 0 && n % options.failEvery === 0;
    const amount = fails ? options.paymentLimit + 1 + n : 100 + (n % 1000);
    const body = { customerId: `customer-${n % 50}`, amount, currency: 'EUR' };
    const key = randomUUID();
    for (;;) {
      const answer = await post(`${options.baseUrl}/orders`, body, key);
      if (answer === 'network-error') {
        // The server may or may not have committed: only the same key can tell.
        retries += 1;
        await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      count(answer.status);
      if (answer.status === 503 && !options.unavailableIsFinal && !stopping) {
        // What a client does with a 503 and its Retry-After: the same request again, under the
        // same key. A 503 the database did not cause (a pool wait that ran out on a starved
        // machine) must not count as an order the fault refused.
        retries += 1;
        await new Promise((resolve) => setTimeout(resolve, 500));
        continue;
      }
      if (answer.replayed) replayed += 1;
      if (answer.status === 201 || answer.status === 200) {
        const order: AcceptedOrder = { orderId: orderIdOf(answer.body), amount, cancelled: false };
        accepted.set(order.orderId, order);
        if (options.cancelEvery > 0 && n % options.cancelEvery === 1) await cancelLater(order);
      } else {
        refused += 1;
      }
      return;
    }
  }

  const started = Date.now();
  const timer = setInterval(() => {
    const due = Math.floor(((Date.now() - started) / 1000) * options.ratePerSecond);
    // While the server stalls, requests not yet sent are dropped rather than burst later.
    if (due - sequence > maxInFlight) sequence = due - maxInFlight;
    while (sequence < due && inFlight.size < maxInFlight) {
      const request = createOrder(sequence++).finally(() => inFlight.delete(request));
      inFlight.add(request);
    }
  }, 20);

  return {
    acceptedSoFar: () => accepted.size,
    acceptedIdsSoFar: () => [...accepted.keys()],
    statusesSoFar: () => ({ ...statusCounts }),
    async stop() {
      clearInterval(timer);
      stopping = true;
      await Promise.all(inFlight);
      return { accepted, refused, statusCounts, retries, replayed, cancelStatusCounts };
    },
  };
}
