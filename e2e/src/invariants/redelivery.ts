import type { TopicMessage } from '../topic-reader.ts';
import type { InvariantExpectations } from './snapshot.ts';

/**
 * No duplicate storm: each event is on its topic at most once, plus the copies the scenario
 * produced itself, plus `redeliveryLimit` resends. A relay that re-sends a batch because one
 * of its rows was refused puts the others there again and again.
 */
export function checkRedelivery(
  topic: string,
  messages: readonly TopicMessage[],
  expect: InvariantExpectations,
): string[] {
  const limit = expect.redeliveryLimit;
  if (limit === undefined) return [];
  const copies = new Map<string, number>();
  for (const { eventId } of messages) copies.set(eventId, (copies.get(eventId) ?? 0) + 1);
  const stormed = [...copies].filter(
    ([eventId, count]) => count > 1 + limit + (expect.injectedCopies?.get(eventId) ?? 0),
  );
  if (stormed.length === 0) return [];
  const [eventId, count] = stormed.sort(([, a], [, b]) => b - a)[0] ?? ['', 0];
  return [
    `${topic}: ${stormed.length} events delivered more than ${1 + limit} times beyond injected copies (event ${eventId} ${count} times)`,
  ];
}
