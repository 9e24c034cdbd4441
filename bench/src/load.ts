import { sleep } from './stats.ts';

export interface OfferedLoadResult {
  /** Orders accepted (201), with the moment their response arrived (epoch ms). */
  readonly committed: ReadonlyMap<string, number>;
  /** Response times of the accepted requests, ms. */
  readonly responseMs: readonly number[];
  readonly failed: number;
  /** Why requests failed: HTTP status or error name, with counts. */
  readonly failures: ReadonlyMap<string, number>;
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
  const failures = new Map<string, number>();
  const fail = (reason: string) => {
    failed++;
    failures.set(reason, (failures.get(reason) ?? 0) + 1);
  };
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
      // When the answer arrived (an overloaded api answers late: B3 takes commit times from
      // PostgreSQL instead).
      const at = nowEpochMs();
      const body: unknown = await response.json();
      if (response.status !== 201 || typeof body !== 'object' || body === null || !('id' in body)) {
        fail(`HTTP ${response.status}`);
        return;
      }
      committed.set(String(body.id), at);
      responseMs.push(performance.now() - sent);
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
      fail(
        cause instanceof Error ? ('code' in cause && String(cause.code)) || cause.name : 'error',
      );
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
  return {
    committed,
    responseMs,
    failed,
    failures,
    offeredRate: total / Math.max(offeredSeconds, 1e-3),
  };
}
