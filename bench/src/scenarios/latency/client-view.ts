import type { OfferedLoadResult } from '../../load.ts';

/** What the clients saw of an offered load, as a run's report row keeps it. */
export interface ClientView {
  readonly offeredRate: number;
  /** Orders accepted (201). */
  readonly orders: number;
  readonly failed: number;
  /** Why requests failed: HTTP status or error name, with counts. */
  readonly failures: string;
  readonly responseMs: readonly number[];
}

/** The failures fold into one line (`503 ×2, ECONNRESET ×1`): a cell of the report's table. */
export function clientViewOf(load: OfferedLoadResult): ClientView {
  return {
    offeredRate: load.offeredRate,
    orders: load.committed.size,
    failed: load.failed,
    failures: [...load.failures].map(([reason, n]) => `${reason} ×${n}`).join(', '),
    responseMs: load.responseMs,
  };
}
