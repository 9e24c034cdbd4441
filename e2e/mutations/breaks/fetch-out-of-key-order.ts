import type { AnchoredEdit } from '../anchored-edits.ts';

export const fetchOutOfKeyOrder: readonly AnchoredEdit[] = [
  {
    in: 'startDedupConsumer.applySet',
    find: [
      '      await runEffects(',
      '        trx,',
      '        items.filter((_, i) => isNew[i] === true),',
    ],
    replace: [
      "      // MUTATION: a fetch's new events are applied last first, out of each key's order.",
      '      await runEffects(',
      '        trx,',
      '        items.filter((_, i) => isNew[i] === true).reverse(),',
    ],
  },
];
