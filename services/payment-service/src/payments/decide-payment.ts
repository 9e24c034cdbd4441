export type PaymentDecision =
  { readonly outcome: 'COMPLETED' } | { readonly outcome: 'FAILED'; readonly reason: string };

/**
 * The simulated payment gateway: deterministic, so a demo and a test know the outcome in
 * advance. An amount above the limit is declined; everything else is charged.
 */
export function decidePayment(
  order: { amount: number },
  rules: { amountLimit: number },
): PaymentDecision {
  if (order.amount > rules.amountLimit) {
    return {
      outcome: 'FAILED',
      reason: `amount ${order.amount} exceeds the limit of ${rules.amountLimit}`,
    };
  }
  return { outcome: 'COMPLETED' };
}
