import type { AnchoredEdit } from '../anchored-edits.ts';

export const noCommitOrderFence: readonly AnchoredEdit[] = [
  {
    in: 'settled',
    find: [
      '  return sql<boolean>`(${sql.raw(alias)}.transaction_id < ${COMMIT_ORDER_FENCE} OR ${sql.raw(alias)}.transaction_id >= pg_snapshot_xmax(pg_current_snapshot()))`;',
    ],
    replace: [
      '  // MUTATION: no commit-order fence; every visible row of ${alias} counts as settled.',
      '  return sql.raw<boolean>(`(${alias}.transaction_id IS NOT NULL OR true)`);',
    ],
  },
];
