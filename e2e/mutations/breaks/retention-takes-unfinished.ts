import type { AnchoredEdit } from '../anchored-edits.ts';

export const retentionTakesUnfinished: readonly AnchoredEdit[] = [
  {
    in: 'retentionPlan',
    find: ['          : sql`published_at IS NOT NULL AND published_at < ${cutoff}`,'],
    replace: [
      '          : // MUTATION: an unpublished row older than the window goes too.',
      '            sql`coalesce(published_at, created_at) < ${cutoff}`,',
    ],
  },
  {
    in: 'retentionPlan',
    find: ['      condition: sql`processed AND processed_at < ${inboxCutoff}`,'],
    replace: [
      '      // MUTATION: an unprocessed row older than the window goes too.',
      '      condition: sql`coalesce(processed_at, received_at) < ${inboxCutoff}`,',
    ],
  },
];
