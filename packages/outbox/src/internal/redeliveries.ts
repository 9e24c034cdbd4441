import { sql, type RawBuilder } from 'kysely';

/**
 * The repeated event ids, each once with its number of copies (`event_id`, `copies`): what an
 * UPDATE adds to the stored rows' `redeliveries`, one statement for the whole batch. An event
 * repeated twice in one batch counts twice.
 */
export function copiesPerEvent(repeats: readonly string[]): RawBuilder<unknown> {
  return sql`SELECT event_id, count(*)::integer AS copies
    FROM unnest(${repeats}::uuid[]) AS event_id GROUP BY event_id`;
}
