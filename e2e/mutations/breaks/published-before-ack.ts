import type { AnchoredEdit } from '../anchored-edits.ts';

export const publishedBeforeAck: readonly AnchoredEdit[] = [
  {
    in: 'publishBatch',
    find: [
      '    if (batch.events.length === 0) return NOTHING;',
      '    const outcome = await sendEvents(deps.producer, batch.events, {',
    ],
    replace: [
      '    if (batch.events.length === 0) return NOTHING;',
      '    // MUTATION: the batch is marked published and committed before Kafka acknowledged it.',
      '    await markPublished(trx, batch.events);',
      '    await sql`COMMIT`.execute(trx);',
      '    const outcome = await sendEvents(deps.producer, batch.events, {',
    ],
  },
];
