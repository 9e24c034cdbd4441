import { HttpError } from '@outbox-inbox/service-kit';
import type { Kysely } from 'kysely';
import type { OrderDatabase } from '../database/schema.ts';
import type { ListOrdersQuery, OrderPage } from './order-schemas.ts';
import { toOrderView } from './order-view.ts';

// The cursor is opaque to clients: today the last seen `seq`, base64url-encoded.
function encodeCursor(seq: string): string {
  return Buffer.from(seq, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const seq = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^\d{1,19}$/.test(seq)) {
    throw new HttpError(400, 'INVALID_CURSOR', 'cursor is not one this API returned', {
      errors: [{ field: 'cursor', in: 'querystring', reason: 'is not a cursor this API returned' }],
    });
  }
  return seq;
}

/**
 * Newest first, keyset pagination on `seq`: a page costs the same however deep it is, and
 * orders created while a client pages do not shift the pages it has not read yet.
 */
export async function listOrders(
  db: Kysely<OrderDatabase>,
  query: ListOrdersQuery,
): Promise<OrderPage> {
  let select = db
    .selectFrom('orders')
    .selectAll()
    .orderBy('seq', 'desc')
    .limit(query.limit + 1);
  if (query.status !== undefined) select = select.where('status', '=', query.status);
  if (query.cursor !== undefined) select = select.where('seq', '<', decodeCursor(query.cursor));
  const rows = await select.execute();
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    items: page.map(toOrderView),
    nextCursor: rows.length > query.limit && last ? encodeCursor(last.seq) : null,
  };
}
