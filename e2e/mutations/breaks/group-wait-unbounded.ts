import type { AnchoredEdit } from '../anchored-edits.ts';

export const groupWaitUnbounded: readonly AnchoredEdit[] = [
  {
    in: 'OrderGroupCommit.create',
    find: ['      const waiting: Waiting = { request, resolve, reject, deadline, timer };'],
    replace: [
      '      // MUTATION: an admitted request waits for a group without its start deadline.',
      '      clearTimeout(timer);',
      '      const waiting: Waiting = { request, resolve, reject, deadline: undefined, timer };',
    ],
  },
];
