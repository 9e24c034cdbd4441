import type { AnchoredEdit } from '../anchored-edits.ts';

export const noHeadOfKey: readonly AnchoredEdit[] = [
  {
    in: 'claimHeads',
    find: [
      '        AND NOT EXISTS (',
      '          SELECT 1 FROM outbox_event older',
      '          WHERE older.partition_key = o.partition_key',
      '            AND older.published_at IS NULL',
      '            AND older.id < o.id',
      '        )',
    ],
    replace: [
      '        -- MUTATION: no head-of-key rule; any unpublished row of a key can be claimed',
    ],
  },
];
