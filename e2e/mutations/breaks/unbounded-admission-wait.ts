import type { AnchoredEdit } from '../anchored-edits.ts';

export const unboundedAdmissionWait: readonly AnchoredEdit[] = [
  {
    in: 'RequestAdmission.acquire',
    find: [
      '    const budgetMs = this.#options.maxWaitMs - options.waitedMs;',
      "    if (budgetMs <= 0) return Promise.reject<() => void>('wait-exceeded' satisfies Refusal);",
    ],
    replace: [],
  },
  {
    in: 'RequestAdmission.acquire',
    find: ["      const timer = setTimeout(() => waiter.refuse('wait-exceeded'), budgetMs);"],
    replace: ['      const timer = undefined;'],
  },
];
