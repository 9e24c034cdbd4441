import { pollUntil } from '@outbox-inbox/infra';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startServicesInOneProcess,
  type InProcessSystem,
} from '../support/services-in-one-process.ts';
import {
  finalStateOf,
  planOrders,
  postToOrders,
  waitUntilOrdersFinal,
} from '../support/order-plan.ts';

let system: InProcessSystem;
beforeAll(async () => {
  system = await startServicesInOneProcess({ relayMode: 'cdc' });
}, 240_000);
afterAll(async () => system?.stop(), 90_000);

/** The values of a connector-labelled gauge in a service's /metrics (none when absent). */
async function connectorGauge(baseUrl: string | undefined, name: string): Promise<number[]> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`))
    .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)));
}

describe('RELAY_MODE=cdc: Debezium on Kafka Connect publishes both outboxes', () => {
  it('settles orders end to end (paid, declined, cancelled); no relay marked a row published', async () => {
    const limit = system.paymentAmountLimit;
    const plan = planOrders(40, limit);
    const ids: string[] = [];
    for (const [i, p] of plan.entries()) {
      const order = await postToOrders(system, '/orders', {
        customerId: `cdc-${i}`,
        amount: p.amount,
        currency: 'EUR',
      });
      if (p.cancel) await postToOrders(system, `/orders/${order.id}/cancel`);
      ids.push(order.id);
    }

    const settled = await waitUntilOrdersFinal(system, ids, 120_000);
    const byId = new Map(settled.map((row) => [row.id, row]));
    plan.forEach((p, i) => {
      expect(byId.get(ids[i] ?? ''), `order ${i}`).toMatchObject(finalStateOf(p, limit));
    });
    const payments = await system.paymentDb
      .selectFrom('payments')
      .select('order_id')
      .where('order_id', 'in', ids)
      .execute();
    expect(payments).toHaveLength(ids.length);

    // No polling relay ran: every row is still unpublished in the table, published by CDC.
    for (const db of [system.orderDb, system.paymentDb] as const) {
      const { rows } = await sql<{ marked: string }>`
        SELECT count(*) FILTER (WHERE published_at IS NOT NULL) AS marked FROM outbox_event
      `.execute(db);
      expect(Number(rows[0]?.marked)).toBe(0);
    }
    for (const service of [system.orders, system.payments]) {
      // The relay role looks at the connector and at its slot every 2 s; the orders can settle
      // sooner than the first looks after the start.
      const reported = await pollUntil(
        async () => {
          const running = await connectorGauge(service.url, 'outbox_cdc_connector_running');
          const slotLag = await connectorGauge(service.url, 'outbox_cdc_slot_lag_bytes');
          return running[0] === 1 && slotLag.length > 0 ? { running, slotLag } : undefined;
        },
        { timeoutMs: 20_000, description: 'the connector running and its slot lag reported' },
      );
      expect(reported.running).toEqual([1]);
      expect(reported.slotLag).toHaveLength(1);
      // Every row is "unpublished" in CDC mode: that gauge would count the whole table.
      const text = await (await fetch(`${service.url}/metrics`)).text();
      expect(text).not.toMatch(/^outbox_unpublished_events /m);
    }
  });
});
