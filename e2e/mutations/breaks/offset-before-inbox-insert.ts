import type { AnchoredEdit } from '../anchored-edits.ts';

export const offsetBeforeInboxInsert: readonly AnchoredEdit[] = [
  {
    in: 'InboxBatchWriter.#store',
    find: ['    };', '    await deps.hooks?.beforeStore?.(info);'],
    replace: [
      '    };',
      "    // MUTATION: the offset is committed before the batch's rows are stored.",
      '    await control.commit(last.offset);',
      '    await deps.hooks?.beforeStore?.(info);',
    ],
  },
];
