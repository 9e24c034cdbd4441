import type { InvariantExpectations, SystemSnapshot } from './snapshot.ts';

/** Nothing the system wrote itself is ever parked; only garbage a scenario injected may be. */
export function checkParked(snapshot: SystemSnapshot, expect: InvariantExpectations): string[] {
  const ours = new Set(
    [...snapshot.orderOutbox, ...snapshot.paymentOutbox].map((row) => row.eventId),
  );
  return snapshot.parked
    .filter(
      (parked) =>
        (parked.eventId !== undefined && ours.has(parked.eventId)) ||
        !(expect.isInjectedGarbage?.(parked) ?? false),
    )
    .map(
      (parked) =>
        `${parked.database}: ${parked.consumer} parked a message of ${parked.topic}` +
        `${parked.eventId ? ` (event ${parked.eventId})` : ''}: ${parked.reason}`,
    );
}
