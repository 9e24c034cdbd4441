import type { AnchoredEdit } from '../anchored-edits.ts';

export const rejoinWithoutDeadline: readonly AnchoredEdit[] = [
  {
    in: 'MemberLoop.#revoke',
    find: [
      '      const reason = `owned no partition for ${timeoutMs} ms after a rebalance began: its join failed`;',
      '      this.#crash(member, new Error(reason));',
    ],
    replace: [
      '      // MUTATION: a join that never comes is waited for without end.',
      '      void timeoutMs;',
    ],
  },
];
