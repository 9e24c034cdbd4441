import type { InvariantExpectations, SystemSnapshot } from './snapshot.ts';

/**
 * payment-service's inbox holds exactly one row per order event (the inbox dedup), no row
 * the order outbox does not have, and every row is processed (or dead, when the scenario
 * made it so).
 */
export function checkInbox(snapshot: SystemSnapshot, expect: InvariantExpectations): string[] {
  const violations: string[] = [];
  // First, with why the first one died: the report shows the first violations only.
  const dead = snapshot.inbox.filter((row) => row.dead);
  if (dead.length !== (expect.dead ?? 0)) {
    const why = dead.find((row) => row.lastError !== undefined)?.lastError;
    violations.push(
      `${dead.length} dead inbox rows, expected ${expect.dead ?? 0}${why === undefined ? '' : ` (last error: ${why})`}`,
    );
  }
  const rowsOf = new Map<string, number>();
  for (const row of snapshot.inbox) rowsOf.set(row.eventId, (rowsOf.get(row.eventId) ?? 0) + 1);
  const sent = new Set(snapshot.orderOutbox.map((row) => row.eventId));
  for (const [eventId, rows] of rowsOf) {
    if (!sent.has(eventId)) violations.push(`inbox: event ${eventId} is not in the order outbox`);
    if (rows > 1) violations.push(`inbox: event ${eventId} stored ${rows} times`);
  }
  const missing = [...sent].filter((eventId) => !rowsOf.has(eventId));
  if (missing.length > 0) violations.push(`inbox: ${missing.length} order events never stored`);
  const unprocessed = snapshot.inbox.filter((row) => !row.processed && !row.dead).length;
  if (unprocessed > 0) violations.push(`${unprocessed} inbox rows unprocessed`);
  return violations;
}
