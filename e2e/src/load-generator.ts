import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';

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
   * Keep-alive connections to the api, at most (64 when unset): a request beyond them waits in
   * the client for one, as behind any client's or proxy's connection pool. Without a bound an
   * overload opens a connection per request, and their SYNs, dropped by a full listen queue, are
   * retried after 1, 3 and 7 s: seconds no server can see or shorten.
   */
  readonly connections?: number;
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
  /** Those requests by their final status. */
  readonly refusedByStatus: Readonly<Record<string, number>>;
  readonly statusCounts: Record<string, number>;
  /** Requests retried with the same Idempotency-Key after a network error or a 503. */
  readonly retries: number;
  /** Create answers the server replayed from an earlier commit of the same Idempotency-Key. */
  readonly replayed: number;
  /** Final answers to cancel requests, by status. */
  readonly cancelStatusCounts: Record<string, number>;
  /**
   * How long the api took to answer each try of a create request, ms: from the moment the try
   * had a connection (so it was on its way to the api) until its answer was read. A try that got
   * no answer counts until it gave up.
   */
  readonly createAnswerMs: readonly number[];
  /** How long each try waited in this client for a free connection first, ms. */
  readonly createQueuedMs: readonly number[];
}

/**
 * How long after `stop()` a 503 is still retried: longer than any admission wait or restart
 * the scenarios cause, short enough that an api refusing for good ends the run.
 */
const STOP_RETRIES_FOR_MS = 30_000;

type Answer = { status: number; body: unknown; replayed: boolean } | 'network-error';

/** An answer, and when the try got its connection (performance.now(); the end if it never did). */
interface Try {
  readonly answer: Answer;
  readonly connectedAt: number;
}

function post(agent: Agent, url: string, body: unknown, idempotencyKey?: string): Promise<Try> {
  const payload = JSON.stringify(body);
  return new Promise((resolve) => {
    let connectedAt: number | undefined;
    const end = (answer: Answer): void =>
      resolve({ answer, connectedAt: connectedAt ?? performance.now() });
    const sent = request(
      url,
      {
        agent,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
        },
        signal: AbortSignal.timeout(10_000),
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', () => end('network-error'));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          end({
            status: response.statusCode ?? 0,
            body: text ? (JSON.parse(text) as unknown) : undefined,
            replayed: response.headers['idempotent-replayed'] === 'true',
          });
        });
      },
    );
    sent.once('socket', () => {
      connectedAt = performance.now();
    });
    sent.on('error', () => end('network-error'));
    sent.end(payload);
  });
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
  /** Offers `ratePerSecond` from now on (an overload, then the normal rate again). */
  setRate(ratePerSecond: number): void;
  acceptedSoFar(): number;
  acceptedIdsSoFar(): string[];
  statusesSoFar(): Readonly<Record<string, number>>;
} {
  const accepted = new Map<string, AcceptedOrder>();
  const statusCounts: Record<string, number> = {};
  const cancelStatusCounts: Record<string, number> = {};
  const refusedByStatus: Record<string, number> = {};
  let retries = 0;
  let replayed = 0;
  let sequence = 0;
  let stopping = false;
  let stoppedAt = 0;
  const stopRetriesEnded = (): boolean =>
    stopping && performance.now() - stoppedAt > STOP_RETRIES_FOR_MS;
  const createAnswerMs: number[] = [];
  const createQueuedMs: number[] = [];
  const inFlight = new Set<Promise<void>>();
  const maxInFlight = options.maxInFlight ?? 64;
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections ?? 64 });

  const count = (status: number | string): void => {
    statusCounts[status] = (statusCounts[status] ?? 0) + 1;
  };

  async function cancelLater(order: AcceptedOrder): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 300));
    // Set once a try got no answer: it may have cancelled the order, so a 503 to a later try
    // does not say it stands (a cancel is idempotent: the next answer that is not a 503 does).
    let mayHaveCancelled = false;
    for (;;) {
      const { answer } = await post(agent, `${options.baseUrl}/orders/${order.orderId}/cancel`, {});
      if (answer === 'network-error') {
        mayHaveCancelled = true;
      } else if (answer.status < 500 || (!mayHaveCancelled && stopRetriesEnded())) {
        cancelStatusCounts[answer.status] = (cancelStatusCounts[answer.status] ?? 0) + 1;
        order.cancelled = answer.status < 300;
        return;
      }
      retries += 1;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async function createOrder(n: number): Promise<void> {
    const fails = options.failEvery > 0 && n % options.failEvery === 0;
    const amount = fails ? options.paymentLimit + 1 + n : 100 + (n % 1000);
    const body = { customerId: `customer-${n % 50}`, amount, currency: 'EUR' };
    const key = randomUUID();
    // Set once a try ended without an answer: that try may have committed, so a 503 to a later
    // one (refused at the door, the key never looked up) does not say the order was not made.
    let mayHaveCommitted = false;
    for (;;) {
      const sent = performance.now();
      const { answer, connectedAt } = await post(agent, `${options.baseUrl}/orders`, body, key);
      createQueuedMs.push(connectedAt - sent);
      createAnswerMs.push(performance.now() - connectedAt);
      if (answer === 'network-error') {
        // The server may or may not have committed: only the same key can tell.
        mayHaveCommitted = true;
        retries += 1;
        await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      count(answer.status);
      // Stopping ends the offer of new orders, not the orders under way: a 503 (at capacity, a
      // moment after a restart) is still retried as a client would, for a while.
      const retryUnavailable =
        mayHaveCommitted || (!options.unavailableIsFinal && !stopRetriesEnded());
      if (answer.status === 503 && retryUnavailable) {
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
        refusedByStatus[answer.status] = (refusedByStatus[answer.status] ?? 0) + 1;
      }
      return;
    }
  }

  // The schedule since the last change of rate: `from` requests were due when it changed.
  let rate = { perSecond: options.ratePerSecond, since: Date.now(), from: 0 };
  const timer = setInterval(() => {
    const due = rate.from + Math.floor(((Date.now() - rate.since) / 1000) * rate.perSecond);
    // While the server stalls, requests not yet sent are dropped rather than burst later.
    if (due - sequence > maxInFlight) sequence = due - maxInFlight;
    while (sequence < due && inFlight.size < maxInFlight) {
      const request = createOrder(sequence++).finally(() => inFlight.delete(request));
      inFlight.add(request);
    }
  }, 20);

  return {
    setRate(perSecond) {
      rate = { perSecond, since: Date.now(), from: sequence };
    },
    acceptedSoFar: () => accepted.size,
    acceptedIdsSoFar: () => [...accepted.keys()],
    statusesSoFar: () => ({ ...statusCounts }),
    async stop() {
      clearInterval(timer);
      stopping = true;
      stoppedAt = performance.now();
      await Promise.all(inFlight);
      agent.destroy();
      return {
        accepted,
        refused: Object.values(refusedByStatus).reduce((sum, n) => sum + n, 0),
        refusedByStatus,
        statusCounts,
        retries,
        replayed,
        cancelStatusCounts,
        createAnswerMs,
        createQueuedMs,
      };
    },
  };
}
