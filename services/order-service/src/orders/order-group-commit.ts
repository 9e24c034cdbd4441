import type { RequestDeadlines } from '@outbox-inbox/service-kit';
import type { Kysely } from 'kysely';
import type { OrderDatabase } from '../database/schema.ts';
import { createOrder, type CreateOrderResult } from './create-order.ts';
import { createOrders, type OrderRequest } from './create-orders.ts';
import { SendDeadlinePassed } from './send-deadline.ts';

export interface OrderGroupCommitOptions {
  /** Most requests one transaction carries. */
  readonly maxGroup: number;
  /** Groups being written at once; a request that finds fewer starts a group of its own at once. */
  readonly maxInFlight: number;
  /**
   * Time kept for the last statement, the COMMIT and the answer: a group sends no statement
   * later than this before the earliest answer deadline of its requests.
   */
  readonly commitReserveMs: number;
}

export const DEFAULT_ORDER_GROUP_COMMIT: OrderGroupCommitOptions = Object.freeze({
  // Small enough that a group commits well within the api's answer bound on a busy machine.
  maxGroup: 16,
  maxInFlight: 2,
  // A group's statements take 5-30 ms on a busy machine; a starved one still commits in this.
  commitReserveMs: 250,
});

/**
 * How many requests the api admits at once (`API_MAX_IN_FLIGHT` unset): every request of the
 * groups in flight and of the next ones. One connection per request, service-kit's default,
 * would cap a group at a few requests.
 */
export const ORDER_API_MAX_IN_FLIGHT =
  DEFAULT_ORDER_GROUP_COMMIT.maxGroup * DEFAULT_ORDER_GROUP_COMMIT.maxInFlight;

interface Waiting {
  readonly request: OrderRequest;
  readonly resolve: (result: CreateOrderResult) => void;
  readonly reject: (error: unknown) => void;
  readonly deadlines: RequestDeadlines | undefined;
  /** Refuses the request when its deadline passes before its group starts. */
  readonly timer: NodeJS.Timeout | undefined;
}

/**
 * Group commit for `POST /orders`: requests that arrive while earlier groups are being written
 * wait and then share one transaction (`createOrders`), so a busy api pays one BEGIN, one
 * COMMIT and one WAL flush per group instead of per order. A request that finds fewer than
 * `maxInFlight` groups under way starts one at once: at a low rate every order is its own group
 * and waits for nothing. Each request is answered only after its group committed. When a group
 * fails as a whole, each of its requests is replayed on its own (`createOrder`), so one bad
 * request fails alone.
 */
export class OrderGroupCommit {
  readonly #db: Kysely<OrderDatabase>;
  readonly #options: OrderGroupCommitOptions;
  readonly #waiting: Waiting[] = [];
  #inFlight = 0;
  #startScheduled = false;

  constructor(db: Kysely<OrderDatabase>, options: Partial<OrderGroupCommitOptions> = {}) {
    this.#db = db;
    this.#options = Object.freeze({ ...DEFAULT_ORDER_GROUP_COMMIT, ...options });
  }

  /**
   * Creates the order (or replays its Idempotency-Key) once its group has committed. With
   * `deadlines`, a request is refused with its 503, having written nothing, when its group has
   * not started by its start deadline (a request waits for its turn at most as long as the
   * admission allows, whether in the admission's queue or in this one), or when its group could
   * not send its COMMIT `commitReserveMs` before the answer deadline (the group rolls back).
   */
  create(request: OrderRequest, deadlines?: RequestDeadlines): Promise<CreateOrderResult> {
    return new Promise((resolve, reject) => {
      const timer =
        deadlines === undefined
          ? undefined
          : setTimeout(
              () => this.#refuse(waiting),
              Math.max(0, deadlines.startBy - performance.now()),
            );
      const waiting: Waiting = { request, resolve, reject, deadlines, timer };
      this.#waiting.push(waiting);
      this.#scheduleStart();
    });
  }

  /**
   * Starts groups once the current turn of the event loop is over. The requests one commit's
   * answers let in arrive within that turn (each answer frees an admission slot for the next
   * waiter), so they share the next group instead of the first of them taking a group slot
   * alone while the rest queue behind it.
   */
  #scheduleStart(): void {
    if (this.#startScheduled) return;
    this.#startScheduled = true;
    setImmediate(() => {
      this.#startScheduled = false;
      this.#startGroups();
    });
  }

  /** Its timer fired: refused, even if the timer ran a fraction of a millisecond early. */
  #refuse(waiting: Waiting): void {
    const index = this.#waiting.indexOf(waiting);
    if (index < 0 || waiting.deadlines === undefined) return;
    this.#waiting.splice(index, 1);
    waiting.reject(waiting.deadlines.refuse('start-deadline'));
  }

  #startGroups(): void {
    while (this.#inFlight < this.#options.maxInFlight && this.#waiting.length > 0) {
      const group = this.#takeGroup();
      if (group.length === 0) continue;
      this.#inFlight += 1;
      void this.#commit(group).finally(() => {
        this.#inFlight -= 1;
        this.#scheduleStart();
      });
    }
  }

  /**
   * The oldest waiting requests, up to `maxGroup`, leaving a request whose Idempotency-Key is
   * already in the group for a later one: two claims of one key in one statement would both
   * miss the other, where one after the other the second finds the first's response.
   */
  #takeGroup(): Waiting[] {
    const group: Waiting[] = [];
    const keys = new Set<string>();
    for (let i = 0; i < this.#waiting.length && group.length < this.#options.maxGroup;) {
      const waiting = this.#waiting[i];
      const key = waiting?.request.idempotencyKey;
      if (waiting === undefined || (key !== undefined && keys.has(key))) {
        i += 1;
        continue;
      }
      this.#waiting.splice(i, 1);
      clearTimeout(waiting.timer);
      // Its timer may not have had its turn yet on a busy event loop.
      if (refuseLate(waiting)) continue;
      if (key !== undefined) keys.add(key);
      group.push(waiting);
    }
    return group;
  }

  async #commit(group: readonly Waiting[]): Promise<void> {
    let outcomes;
    try {
      outcomes = await createOrders(
        this.#db,
        group.map((waiting) => waiting.request),
        { sendBy: this.#sendBy(group) },
      );
    } catch (error) {
      if (error instanceof SendDeadlinePassed) {
        // Rolled back: answered late, a 201 would break the bound, and a replay later still.
        for (const waiting of group)
          waiting.reject(waiting.deadlines?.refuse('answer-deadline') ?? error);
        return;
      }
      // Nothing of the group was written: each request again, alone, with its own outcome.
      await Promise.all(group.map((waiting) => this.#createAlone(waiting)));
      return;
    }
    group.forEach((waiting, index) => {
      const outcome = outcomes[index];
      if (outcome === undefined || outcome instanceof Error) waiting.reject(outcome);
      else waiting.resolve(outcome);
    });
  }

  /** When the group must have sent its last statement: its earliest answer deadline, less the reserve. */
  #sendBy(group: readonly Waiting[]): number | undefined {
    const answerBy = Math.min(...group.map((waiting) => waiting.deadlines?.answerBy ?? Infinity));
    return answerBy === Infinity ? undefined : answerBy - this.#options.commitReserveMs;
  }

  async #createAlone({ request, resolve, reject }: Waiting): Promise<void> {
    try {
      resolve(await createOrder(this.#db, request.body, request.idempotencyKey, request.trace));
    } catch (error) {
      reject(error);
    }
  }
}

/** Refuses a request whose start deadline has passed (its timer not run yet); true when it did. */
function refuseLate(waiting: Waiting): boolean {
  const { deadlines } = waiting;
  if (deadlines === undefined || performance.now() <= deadlines.startBy) return false;
  waiting.reject(deadlines.refuse('start-deadline'));
  return true;
}
