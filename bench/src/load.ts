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

/** Tallies of one offered load, filled in as the answers arrive. */
class Tally {
  readonly committed = new Map<string, number>();
  readonly responseMs: number[] = [];
  readonly failures = new Map<string, number>();
  failed = 0;

  fail(reason: string): void {
    this.failed++;
    this.failures.set(reason, (this.failures.get(reason) ?? 0) + 1);
  }
}

function failureReason(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return cause instanceof Error ? ('code' in cause && String(cause.code)) || cause.name : 'error';
}

/** `POST /orders` number `i`, recorded in the tally. */
async function postOrder(baseUrl: string, i: number, tally: Tally): Promise<void> {
  const sent = performance.now();
  try {
    const response = await fetch(`${baseUrl}/orders`, {
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
      tally.fail(`HTTP ${response.status}`);
      return;
    }
    tally.committed.set(String(body.id), at);
    tally.responseMs.push(performance.now() - sent);
  } catch (error) {
    tally.fail(failureReason(error));
  }
}

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
  const tally = new Tally();
  const inFlight = new Set<Promise<void>>();
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = started + (i * 1000) / options.rate - performance.now();
    if (wait >= 1) await sleep(wait);
    const request: Promise<void> = postOrder(options.baseUrl, i, tally).finally(() =>
      inFlight.delete(request),
    );
    inFlight.add(request);
  }
  const offeredSeconds = (performance.now() - started) / 1000;
  await Promise.all(inFlight);
  return {
    committed: tally.committed,
    responseMs: tally.responseMs,
    failed: tally.failed,
    failures: tally.failures,
    offeredRate: total / Math.max(offeredSeconds, 1e-3),
  };
}
