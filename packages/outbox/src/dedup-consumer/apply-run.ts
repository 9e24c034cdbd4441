import { sql, type Kysely, type Transaction } from 'kysely';
import type { ReceivedEvent } from '../kafka/received-event.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { startEventSpan, type EventSpan } from '../trace/spans.ts';
import { applyOnce } from './apply-once.ts';

/**
 * Events one transaction applies at most. PostgreSQL keeps 64 subtransactions per transaction
 * in shared memory (more would slow every snapshot), and a long run holds its rows' locks.
 */
export const MAX_EVENTS_PER_RUN = 50;

export interface RunDeps<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  readonly consumerName: string;
  readonly groupId: string;
  readonly handle: (trx: Transaction<DB>, event: ReceivedEvent) => Promise<void>;
}

export interface RunResult {
  /** Whether each event of the run's committed prefix was applied (false: a repeat). */
  readonly applied: readonly boolean[];
  /** Why the event after that prefix failed, if one did; it goes back to the caller. */
  readonly failure?: { readonly error: unknown };
}

/**
 * Applies consecutive events of one partition in one transaction, each through `applyOnce` in
 * a savepoint of its own, and commits them once: one commit (one WAL flush) for the run
 * instead of one per event. At the first event that throws, its savepoint is rolled back and
 * the events before it commit; that event and the rest go back to the caller, with the error:
 * its one-at-a-time path parks data PostgreSQL refused at once, and retries anything else,
 * waits out an outage and parks. If the transaction itself fails
 * (PostgreSQL unreachable), nothing of the run stays and the caller starts again from its
 * first event, which `processed_event` makes safe however far the commit got.
 */
export async function applyRun<DB extends OutboxTables>(
  deps: RunDeps<DB>,
  events: readonly ReceivedEvent[],
): Promise<RunResult> {
  const spans: EventSpan[] = [];
  const applied: boolean[] = [];
  let failure: { error: unknown } | undefined;
  try {
    await deps.db.transaction().execute(async (trx) => {
      for (const event of events.slice(0, MAX_EVENTS_PER_RUN)) {
        const span = startSpan(deps.groupId, event);
        spans.push(span);
        await sql`SAVEPOINT dedup_event`.execute(trx);
        try {
          applied.push(
            await span.activate(() =>
              applyOnce(trx, deps.consumerName, event.eventId, () => deps.handle(trx, event)),
            ),
          );
        } catch (error) {
          span.end(error);
          spans.pop();
          await sql`ROLLBACK TO SAVEPOINT dedup_event`.execute(trx);
          failure = { error };
          return;
        }
      }
    });
  } catch (error) {
    for (const span of spans) span.end(error);
    return { applied: [] };
  }
  for (const [n, span] of spans.entries()) {
    if (applied[n] === false) span.markDuplicate();
    span.end();
  }
  return failure === undefined ? { applied } : { applied, failure };
}

/** The event's span, continuing its trace; the handler's writes are its children. */
function startSpan(groupId: string, event: ReceivedEvent): EventSpan {
  return startEventSpan({
    operation: 'apply',
    topic: event.topic,
    eventId: event.eventId,
    eventType: event.eventType,
    partitionKey: event.partitionKey,
    headers: event.headers,
    consumerGroup: groupId,
    partition: event.partition,
    offset: event.offset,
  });
}
