import type { AnchoredEdit } from '../anchored-edits.ts';

export const retentionTakesUnfinished: readonly AnchoredEdit[] = [
  {
    in: 'retentionPlan',
    find: [
      '          : sql`published_at IS NOT NULL AND published_at < ${cutoff}`,',
      '      skipLocked: true,',
      '    },',
      '  ];',
      '  if (inboxCutoff !== undefined) {',
      '    steps.push({',
      "      table: 'inbox_event',",
      '      condition: sql`processed AND processed_at < ${inboxCutoff}`,',
    ],
    replace: [
      '          : // MUTATION: an unpublished row older than the window goes too.',
      '            sql`coalesce(published_at, created_at) < ${cutoff}`,',
      '      skipLocked: true,',
      '    },',
      '  ];',
      '  if (inboxCutoff !== undefined) {',
      '    steps.push({',
      "      table: 'inbox_event',",
      '      // MUTATION: an unprocessed row older than the window goes too.',
      '      condition: sql`coalesce(processed_at, received_at) < ${inboxCutoff}`,',
    ],
  },
];
