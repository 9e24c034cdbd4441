import type { AnchoredEdit } from '../anchored-edits.ts';

export const failedBatchMarksAll: readonly AnchoredEdit[] = [
  {
    in: 'writeAttempts',
    find: ['        await sql`ROLLBACK TO SAVEPOINT inbox_batch`.execute(trx);', '      }'],
    replace: [
      '        await sql`ROLLBACK TO SAVEPOINT inbox_batch`.execute(trx);',
      "        // MUTATION: the failed batch's rows are all marked processed, the failing one included.",
      '        done.push(...batch);',
      '        continue;',
      '      }',
    ],
  },
];
