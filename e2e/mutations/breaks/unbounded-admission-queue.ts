import type { AnchoredEdit } from '../anchored-edits.ts';

export const unboundedAdmissionQueue: readonly AnchoredEdit[] = [
  {
    in: 'RequestAdmission.acquire',
    find: [
      '    if (this.#queue.size >= this.#maxWaiting)',
      "      return Promise.reject<() => void>('queue-full' satisfies Refusal);",
    ],
    replace: [],
  },
];
