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

/** What the load counted so far: each request adds to it, `stop()` reports it. */
interface LoadTally {
  readonly accepted: Map<string, AcceptedOrder>;
  readonly statusCounts: Record<string, number>;
  readonly cancelStatusCounts: Record<string, number>;
  readonly refusedByStatus: Record<string, number>;
  retries: number;
  replayed: number;
  readonly createAnswerMs: number[];
  readonly createQueuedMs: number[];
}

/** What every request of one load shares: its options, its connections and its tally. */
interface LoadContext {
  readonly options: LoadOptions;
  readonly agent: Agent;
  readonly tally: LoadTally;
  /** Whether `stop()` was called long enough ago that a 503 is no longer retried. */
  stopRetriesEnded(): boolean;
}

/** Cancels an accepted order a moment later, trying again until an answer says what stands. */
async function cancelLater(load: LoadContext, order: AcceptedOrder): Promise<void> {
  const { options, agent, tally } = load;
  await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 300));
  // Set once a try got no answer: it may have cancelled the order, so a 503 to a later try
  // does not say it stands (a cancel is idempotent: the next answer that is not a 503 does).
  let mayHaveCancelled = false;
  for (;;) {
    const { answer } = await post(agent, `${options.baseUrl}/orders/${order.orderId}/cancel`, {});
    if (answer === 'network-error') {
      mayHaveCancelled = true;
    } else if (answer.status < 500 || (!mayHaveCancelled && load.stopRetriesEnded())) {
      tally.cancelStatusCounts[answer.status] = (tally.cancelStatusCounts[answer.status] ?? 0) + 1;
      order.cancelled = answer.status < 300;
      return;
    }
    tally.retries += 1;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Creates order `n`, under one Idempotency-Key until its answer is final; cancels some. */
async function createOrder(load: LoadContext, n: number): Promise<void> {
  const { options, agent, tally } = load;
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
    tally.createQueuedMs.push(connectedAt - sent);
    tally.createAnswerMs.push(performance.now() - connectedAt);
    if (answer === 'network-error') {
      // The server may or may not have committed: only the same key can tell.
      mayHaveCommitted = true;
      tally.retries += 1;
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    tally.statusCounts[answer.status] = (tally.statusCounts[answer.status] ?? 0) + 1;
    // Stopping ends the offer of new orders, not the orders under way: a 503 (at capacity, a
    // moment after a restart) is still retried as a client would, for a while.
    const retryUnavailable =
      mayHaveCommitted || (!options.unavailableIsFinal && !load.stopRetriesEnded());
    if (answer.status === 503 && retryUnavailable) {
      // What a client does with a 503 and its Retry-After: the same request again, under the
      // same key. A 503 the database did not cause (a pool wait that ran out on a starved
      // machine) must not count as an order the fault refused.
      tally.retries += 1;
      await new Promise((resolve) => setTimeout(resolve, 500));
      continue;
    }
    if (answer.replayed) tally.replayed += 1;
    if (answer.status === 201 || answer.status === 200) {
      const order: AcceptedOrder = { orderId: orderIdOf(answer.body), amount, cancelled: false };
      tally.accepted.set(order.orderId, order);
      if (options.cancelEvery > 0 && n % options.cancelEvery === 1) await cancelLater(load, order);
    } else {
      tally.refusedByStatus[answer.status] = (tally.refusedByStatus[answer.status] ?? 0) + 1;
    }
    return;
  }
}

/** What the load got, once every request under way has its final answer. */
function loadResult(tally: LoadTally): LoadResult {
  return {
    accepted: tally.accepted,
    refused: Object.values(tally.refusedByStatus).reduce((sum, n) => sum + n, 0),
    refusedByStatus: tally.refusedByStatus,
    statusCounts: tally.statusCounts,
    retries: tally.retries,
    replayed: tally.replayed,
    cancelStatusCounts: tally.cancelStatusCounts,
    createAnswerMs: tally.createAnswerMs,
    createQueuedMs: tally.createQueuedMs,
  };
}

/** A load under way. */
export interface RunningLoad {
  stop(): Promise<LoadResult>;
  /** Offers `ratePerSecond` from now on (an overload, then the normal rate again). */
  setRate(ratePerSecond: number): void;
  acceptedSoFar(): number;
  acceptedIdsSoFar(): string[];
  statusesSoFar(): Readonly<Record<string, number>>;
}

/**
 * Creates orders over HTTP at a steady rate while faults are injected. A request that fails
 * on the network is retried with the same Idempotency-Key until it gets an answer, so every
 * order ends either accepted (201) or refused: the suite can then check for phantoms.
 */
export function startLoad(options: LoadOptions): RunningLoad {
  const tally: LoadTally = {
    accepted: new Map(),
    statusCounts: {},
    cancelStatusCounts: {},
    refusedByStatus: {},
    retries: 0,
    replayed: 0,
    createAnswerMs: [],
    createQueuedMs: [],
  };
  let sequence = 0;
  let stopping = false;
  let stoppedAt = 0;
  const inFlight = new Set<Promise<void>>();
  const maxInFlight = options.maxInFlight ?? 64;
  const load: LoadContext = {
    options,
    agent: new Agent({ keepAlive: true, maxSockets: options.connections ?? 64 }),
    tally,
    stopRetriesEnded: () => stopping && performance.now() - stoppedAt > STOP_RETRIES_FOR_MS,
  };

  // The schedule since the last change of rate: `from` requests were due when it changed.
  let rate = { perSecond: options.ratePerSecond, since: Date.now(), from: 0 };
  const timer = setInterval(() => {
    const due = rate.from + Math.floor(((Date.now() - rate.since) / 1000) * rate.perSecond);
    // While the server stalls, requests not yet sent are dropped rather than burst later.
    if (due - sequence > maxInFlight) sequence = due - maxInFlight;
    while (sequence < due && inFlight.size < maxInFlight) {
      const request = createOrder(load, sequence++).finally(() => inFlight.delete(request));
      inFlight.add(request);
    }
  }, 20);

  return {
    setRate(perSecond) {
      rate = { perSecond, since: Date.now(), from: sequence };
    },
    acceptedSoFar: () => tally.accepted.size,
    acceptedIdsSoFar: () => [...tally.accepted.keys()],
    statusesSoFar: () => ({ ...tally.statusCounts }),
    async stop() {
      clearInterval(timer);
      stopping = true;
      stoppedAt = performance.now();
      await Promise.all(inFlight);
      load.agent.destroy();
      return loadResult(tally);
    },
  };
}
