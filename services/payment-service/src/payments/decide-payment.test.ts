import { describe, expect, it } from 'vitest';
import { decidePayment } from './decide-payment.ts';

describe('decidePayment', () => {
  it('charges up to the limit and declines above it', () => {
    expect(decidePayment({ amount: 100 }, { amountLimit: 100 })).toEqual({ outcome: 'COMPLETED' });
    expect(decidePayment({ amount: 101 }, { amountLimit: 100 })).toEqual({
      outcome: 'FAILED',
      reason: 'amount 101 exceeds the limit of 100',
    });
  });
});
