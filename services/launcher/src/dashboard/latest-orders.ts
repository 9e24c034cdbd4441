/** One step of an order's journey, as GET /orders/:id returns it. */
export interface JourneyStep {
  readonly eventType: string;
  readonly status: string;
  readonly paymentStatus: string | null;
  readonly at: string;
}

export interface OrderWithJourney {
  readonly id: string;
  readonly amount: number;
  readonly currency: string;
  readonly status: string;
  readonly createdAt: string;
  readonly journey: readonly JourneyStep[];
}

/**
 * The newest orders with their journeys, from order-service's own API (what a client sees).
 * Throws when the API does not answer; the caller keeps what it showed last.
 */
export async function readLatestOrders(
  orderApiUrl: string,
  limit: number,
  timeoutMs: number,
): Promise<OrderWithJourney[]> {
  const get = async (path: string): Promise<unknown> => {
    const response = await fetch(`${orderApiUrl}${path}`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) throw new Error(`GET ${path}: ${response.status}`);
    return response.json();
  };
  const page = (await get(`/orders?limit=${limit}`)) as { items: { id: string }[] };
  return Promise.all(
    page.items.map(async (item) => (await get(`/orders/${item.id}`)) as OrderWithJourney),
  );
}
