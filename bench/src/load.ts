import { sleep } from './stats.ts';

export interface OfferedLoadResult {
  /** Orders accepted (201), with the moment the response arrived (epoch ms, sub-ms precision). */
  readonly committed: ReadonlyMap<string, number>;
  /** Response times of the accepted requests, ms. */
  readonly responseMs: readonly number[];
  readonly failed: number;
  /** Requests per second actually offered (the schedule can slip on a loaded machine). */
  readonly offeredRate: number;
}

const nowEpochMs = (): number => performance.timeOrigin + performance.now();

/**
 * Open-loop load: request i is sent at start + i / rate whether or not earlier ones have
 * answered (a closed loop would slow down with the system and hide its latency).
 */
export async function offerOrders(options: {
  readonly baseUrl: string;
  readonly rate: number;
  readonly seconds: number;
}): Promise<OfferedLoadResult> {
  const total = Math.max(1, Math.round(options.rate * options.seconds));
  const committed = new Map<string, number>();
  const responseMs: number[] = [];
  let failed = 0;
  const inFlight = new Set<Promise<void>>();
  const post = async (i: number): Promise<void> => {
    const sent = performance.now();
    try {
      const response = await fetch(`${options.baseUrl}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          customerId: `customer-${i % 997}`,
          amount: 1000 + (i % 40_000),
          currency: 'EUR',
        }),
      });
      // The transaction committed before the response was written: this is "commit", late by
      // the response's trip over loopback (well under a millisecond).
      const at = nowEpochMs();
      const body: unknown = await response.json();
      if (response.status !== 201 || typeof body !== 'object' || body === null || !('id' in body)) {
        failed++;
        return;
      }
      committed.set(String(body.id), at);
      responseMs.push(performance.now() - sent);
    } catch {
      failed++;
    }
  };
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = started + (i * 1000) / options.rate - performance.now();
    if (wait >= 1) await sleep(wait);
    const request: Promise<void> = post(i).finally(() => inFlight.delete(request));
    inFlight.add(request);
  }
  const offeredSeconds = (performance.now() - started) / 1000;
  await Promise.all(inFlight);
  return { committed, responseMs, failed, offeredRate: total / Math.max(offeredSeconds, 1e-3) };
}
