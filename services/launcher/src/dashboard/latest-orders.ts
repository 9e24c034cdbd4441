/** One step of an order's journey, as GET /orders/:id returns it. */
export interface JourneyStep {
  /** The event the order emitted or applied at this step. */
  readonly eventId: string;
  readonly eventType: string;
  readonly status: string;
  readonly paymentStatus: string | null;
  readonly at: string;
}

/** An order as GET /orders/:id returns it. */
export interface OrderDetails {
  readonly id: string;
  readonly amount: number;
  readonly currency: string;
  readonly status: string;
  readonly createdAt: string;
  readonly journey: readonly JourneyStep[];
}

export interface OrderWithJourney extends OrderDetails {
  /** Repeat deliveries of the order's events that an inbox or processed_event dropped. */
  readonly duplicatesAbsorbed: number;
}

/** Redeliveries absorbed per event id (lower case), for the ids asked; an id absent counts 0. */
export type ReadRedeliveries = (
  eventIds: readonly string[],
) => Promise<ReadonlyMap<string, number>>;

/**
 * The newest orders with their journeys, from order-service's own API (what a client sees),
 * and for each the repeats its events absorbed, from the dedup rows of the services'
 * databases. Throws when either does not answer; the caller keeps what it showed last.
 */
export async function readLatestOrders(
  source: { readonly orderApiUrl: string; readonly redeliveries: ReadRedeliveries },
  limit: number,
  timeoutMs: number,
): Promise<OrderWithJourney[]> {
  const get = async (path: string): Promise<unknown> => {
    const response = await fetch(`${source.orderApiUrl}${path}`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) throw new Error(`GET ${path}: ${response.status}`);
    return response.json();
  };
  const page = (await get(`/orders?limit=${limit}`)) as { items: { id: string }[] };
  const orders = await Promise.all(
    page.items.map(async (item) => (await get(`/orders/${item.id}`)) as OrderDetails),
  );
  const counts = await source.redeliveries([...new Set(orders.flatMap(eventIdsOf))]);
  return orders.map((order) => ({
    ...order,
    duplicatesAbsorbed: duplicatesAbsorbed(order, counts),
  }));
}

/**
 * The repeats the order's events absorbed: each event of its journey once (a step shown twice,
 * an event applied twice, is one event and one dedup row), summed over the counts read.
 */
export function duplicatesAbsorbed(
  order: Pick<OrderDetails, 'journey'>,
  redeliveries: ReadonlyMap<string, number>,
): number {
  let sum = 0;
  for (const eventId of eventIdsOf(order)) sum += redeliveries.get(eventId) ?? 0;
  return sum;
}

/** The distinct ids of the events in the order's journey, lower case as PostgreSQL writes them. */
function eventIdsOf(order: Pick<OrderDetails, 'journey'>): string[] {
  return [...new Set(order.journey.map((step) => step.eventId.toLowerCase()))];
}
