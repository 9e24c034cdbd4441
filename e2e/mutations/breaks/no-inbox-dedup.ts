import type { AnchoredEdit } from '../anchored-edits.ts';

export const noInboxDedup: readonly AnchoredEdit[] = [
  {
    in: 'insertInboxEvents',
    find: ['      ON CONFLICT (event_id) DO NOTHING'],
    replace: ['      -- MUTATION: no ON CONFLICT (event_id) DO NOTHING'],
  },
  {
    in: 'schema0001Statements',
    find: ['        event_id         uuid PRIMARY KEY,'],
    replace: [
      '        event_id         uuid NOT NULL, -- MUTATION: no primary key, so nothing dedups',
    ],
  },
];
