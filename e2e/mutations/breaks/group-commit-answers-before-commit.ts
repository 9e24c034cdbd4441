import type { AnchoredEdit } from '../anchored-edits.ts';

export const groupCommitAnswersBeforeCommit: readonly AnchoredEdit[] = [
  {
    in: 'createOrders',
    find: ['  return db.transaction().execute(async (unbounded) => {'],
    replace: [
      '  // MUTATION: the outcomes are handed back from inside the transaction, before its COMMIT.',
      '  return new Promise((resolve, reject) => {',
      '    db.transaction().execute(async (unbounded) => {',
    ],
  },
  {
    in: 'createOrders',
    find: ['    return requests.map((_, index) => outcome(outcomes, index));'],
    replace: [
      '    const answers = requests.map((_, index) => outcome(outcomes, index));',
      '    resolve(answers);',
      '    return answers;',
      '    }).catch(reject);',
    ],
  },
];
