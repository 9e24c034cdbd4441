import type { AnchoredEdit } from '../anchored-edits.ts';

export const groupWaitUnbounded: readonly AnchoredEdit[] = [
  {
    in: 'OrderGroupCommit.create',
    find: ['      const waiting: Waiting = { request, resolve, reject, deadlines, timer };'],
    replace: [
      '      // MUTATION: an admitted request waits for a group without its start deadline.',
      '      clearTimeout(timer);',
      '      const waiting: Waiting = { request, resolve, reject, deadlines: undefined, timer };',
    ],
  },
];
