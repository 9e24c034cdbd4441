import { randomUUID } from 'node:crypto';
import { enqueueMany } from '@outbox-inbox/outbox';
import type { TraceContext } from '@outbox-inbox/outbox/trace';
import { HttpError } from '@outbox-inbox/service-kit';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { OrderDatabase, OrderRow } from '../database/schema.ts';
import { orderCreatedEvent, requestHash, type CreateOrderResult } from './create-order.ts';
import type { CreateOrderBody } from './order-schemas.ts';
import { toOrderView } from './order-view.ts';
import { SendDeadline } from './send-deadline.ts';

/** One `POST /orders` as the group commit holds it. */
export interface OrderRequest {
  readonly body: CreateOrderBody;
  readonly idempotencyKey: string | undefined;
  readonly trace: TraceContext | undefined;
}

/** What one request of a group gets: its response, or the 4xx it alone is refused with. */
export type OrderOutcome = CreateOrderResult | HttpError;

/**
 * Creates the orders of several requests in one transaction, with a constant number of
 * statements whatever their number: the idempotency keys claimed in one INSERT, the orders,
 * their OrderCreated outbox rows and their history rows each in one INSERT, the keys' responses
 * in one UPDATE. Outcomes are in request order. A request whose Idempotency-Key was used before
 * gets the first response (or 422 for another body) and creates nothing, as in `createOrder`.
 * Two requests of one group must not share a key (the group commit keeps them apart): both
 * would claim it in the same statement. Throws when the transaction fails: then no request of
 * the group created anything, and the caller replays each on its own. With `sendBy`
 * (`performance.now()`), no statement and no COMMIT is sent after it: the transaction rolls back
 * with `SendDeadlinePassed` instead of committing too late to be answered in time.
 */
export async function createOrders(
  db: Kysely<OrderDatabase>,
  requests: readonly OrderRequest[],
  options: { sendBy?: number } = {},
): Promise<OrderOutcome[]> {
  const deadline = options.sendBy === undefined ? undefined : new SendDeadline(options.sendBy);
  return db.transaction().execute(async (unbounded) => {
    const trx = deadline === undefined ? unbounded : unbounded.withPlugin(deadline);
    const outcomes = new Map<number, OrderOutcome>(await replayedKeys(trx, requests));
    const creating = requests.flatMap((request, index) =>
      outcomes.has(index) ? [] : [{ request, index }],
    );
    if (creating.length === 0) return requests.map((_, index) => outcome(outcomes, index));
    const rows = await insertOrderRows(
      trx,
      creating.map(({ request }) => request.body),
    );
    // Same transaction as the order rows (R-DIST-OBX-1): all commit, or none does. No NOTIFY
    // here: the route wakes the relays once the group has committed.
    const { eventIds } = await enqueueMany(
      trx,
      rows.map((row, n) => orderCreatedEvent(row, creating[n]?.request.trace)),
      { notify: false },
    );
    await sql`
      INSERT INTO order_history (order_id, event_id, event_type, status)
      SELECT order_id, event_id, 'OrderCreated', 'PENDING'
        FROM unnest(${rows.map((row) => row.id)}::uuid[], ${eventIds}::uuid[])
          AS t(order_id, event_id)`.execute(trx);
    const answered = creating.map(({ index }, n) => {
      const row = rows[n];
      if (row === undefined) throw new Error('an order of the group was not inserted');
      const created: CreateOrderResult = { status: 201, body: toOrderView(row), replayed: false };
      outcomes.set(index, created);
      return { key: requests[index]?.idempotencyKey, body: JSON.stringify(created.body) };
    });
    await recordResponses(trx, answered);
    deadline?.check();
    return requests.map((_, index) => outcome(outcomes, index));
  });
}

function outcome(outcomes: ReadonlyMap<number, OrderOutcome>, index: number): OrderOutcome {
  const found = outcomes.get(index);
  if (found === undefined) throw new Error(`request ${index} of the group has no outcome`);
  return found;
}

/**
 * Claims the keys of the keyed requests in one INSERT. A key that was claimed before (or by a
 * transaction that commits while this one waits on it) is not claimed again: its request gets
 * the first response, or 422 when its body differs.
 */
async function replayedKeys(
  trx: Transaction<OrderDatabase>,
  requests: readonly OrderRequest[],
): Promise<[number, OrderOutcome][]> {
  const keyed = requests.flatMap((request, index) =>
    request.idempotencyKey === undefined
      ? []
      : [{ index, key: request.idempotencyKey, hash: requestHash(request.body) }],
  );
  if (keyed.length === 0) return [];
  const claimed = await trx
    .insertInto('idempotency_key')
    .values(keyed.map(({ key, hash }) => ({ key, request_hash: hash })))
    .onConflict((oc) => oc.column('key').doNothing())
    .returning('key')
    .execute();
  const claimedKeys = new Set(claimed.map((row) => row.key));
  const used = keyed.filter(({ key }) => !claimedKeys.has(key));
  if (used.length === 0) return [];
  const firsts = await trx
    .selectFrom('idempotency_key')
    .select(['key', 'request_hash', 'response_status', 'response_body'])
    .where(
      'key',
      'in',
      used.map(({ key }) => key),
    )
    .execute();
  return used.map(({ index, key, hash }): [number, OrderOutcome] => {
    const first = firsts.find((row) => row.key === key);
    if (first === undefined) throw new Error(`idempotency key ${key} neither claimed nor found`);
    if (first.request_hash !== hash) {
      return [
        index,
        new HttpError(
          422,
          'IDEMPOTENCY_KEY_REUSED',
          'this Idempotency-Key was already used with a different request body',
        ),
      ];
    }
    return [
      index,
      { status: first.response_status ?? 201, body: first.response_body, replayed: true },
    ];
  });
}

/** The orders, in the order of `bodies`, by one INSERT over arrays (one statement text). */
async function insertOrderRows(
  trx: Transaction<OrderDatabase>,
  bodies: readonly CreateOrderBody[],
): Promise<OrderRow[]> {
  const ids = bodies.map(() => randomUUID());
  const rows = await trx
    .insertInto('orders')
    .columns(['id', 'customer_id', 'amount', 'currency', 'status'])
    .expression(
      sql`SELECT id, customer_id, amount, currency, 'PENDING'
            FROM unnest(${ids}::uuid[], ${bodies.map((b) => b.customerId)}::text[],
                        ${bodies.map((b) => b.amount)}::int8[],
                        ${bodies.map((b) => b.currency)}::text[])
              AS t(id, customer_id, amount, currency)`,
    )
    .returningAll()
    .execute();
  // RETURNING promises no order: put the rows back in the order of the requests.
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => {
    const row = byId.get(id);
    if (row === undefined) throw new Error(`order ${id} was not inserted`);
    return row;
  });
}

/** The response of each keyed request, stored with its key in one UPDATE. */
async function recordResponses(
  trx: Transaction<OrderDatabase>,
  answered: readonly { key: string | undefined; body: string }[],
): Promise<void> {
  const keyed = answered.flatMap(({ key, body }) => (key === undefined ? [] : [{ key, body }]));
  if (keyed.length === 0) return;
  const keys = keyed.map((r) => r.key);
  // The `= ANY` repeats the join's keys for the planner (see apply-payment-event.ts, createPgPool).
  await sql`
    UPDATE idempotency_key AS k SET response_status = 201, response_body = r.body::jsonb
      FROM unnest(${keys}::text[], ${keyed.map((r) => r.body)}::text[]) AS r(key, body)
     WHERE k.key = ANY(${keys}::text[]) AND k.key = r.key`.execute(trx);
}
