import type { AnchoredEdit } from '../anchored-edits.ts';

export const noProcessedEventDedup: readonly AnchoredEdit[] = [
  {
    in: 'recordProcessedEvents',
    find: ['    const fresh = firstCopies.delete(eventId.toLowerCase());'],
    replace: [
      '    // MUTATION: a repeat (processed_event row already there) is applied again.',
      '    const fresh = firstCopies.delete(eventId.toLowerCase()) || true;',
    ],
  },
];
