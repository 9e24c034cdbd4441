import type { AnchoredEdit } from '../anchored-edits.ts';

/** The adapter as it was before it kept positions: the stream's own are believed. */
export const streamPositionsBelieved: readonly AnchoredEdit[] = [
  {
    in: 'MemberLoop.#afterJoin',
    find: ['    member.rewindNeeded = true;'],
    replace: ['    // MUTATION: no move back to the committed offsets after a join.'],
  },
  {
    in: 'PartitionPositions.take',
    find: ['      if (expected !== undefined && one.offset !== expected) {'],
    replace: [
      '      // MUTATION: whatever the stream returns is handed over, gaps and rewinds too.',
      '      if (expected !== undefined && one.offset < 0n) {',
    ],
  },
];
