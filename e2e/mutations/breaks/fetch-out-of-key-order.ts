import type { AnchoredEdit } from '../anchored-edits.ts';

export const fetchOutOfKeyOrder: readonly AnchoredEdit[] = [
  {
    in: 'FetchApplier.#applySet',
    find: [
      '      await this.#runEffects(',
      '        trx,',
      '        items.filter((_, i) => isNew[i] === true),',
    ],
    replace: [
      "      // MUTATION: a fetch's new events are applied last first, out of each key's order.",
      '      await this.#runEffects(',
      '        trx,',
      '        items.filter((_, i) => isNew[i] === true).reverse(),',
    ],
  },
];
