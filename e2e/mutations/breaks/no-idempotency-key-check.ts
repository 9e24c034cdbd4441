import type { AnchoredEdit } from '../anchored-edits.ts';

export const noIdempotencyKeyCheck: readonly AnchoredEdit[] = [
  {
    in: 'createOrder',
    find: ['    if (idempotencyKey === undefined) {'],
    replace: [
      '    // MUTATION: the Idempotency-Key is not looked at; every request creates an order.',
      '    if (idempotencyKey === undefined || idempotencyKey !== undefined) {',
    ],
  },
  {
    in: 'replayedKeys',
    find: ['  if (keyed.length === 0) return [];'],
    replace: [
      '  // MUTATION: the Idempotency-Keys of a group are not looked at; every request creates an order.',
      '  if (keyed.length >= 0) return [];',
    ],
  },
];
