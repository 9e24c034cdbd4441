import { setTimeout as sleep } from 'node:timers/promises';
import { decidePayment, type PaymentDecision } from './decide-payment.ts';

export interface ChargeRequest {
  /** The inbox event's id: a repeated call with the same key must not charge twice. */
  readonly idempotencyKey: string;
  readonly orderId: string;
  readonly customerId: string;
  readonly amount: number;
  readonly currency: string;
}

/** The payment provider, as the processor calls it: outside any database transaction. */
export interface PaymentGateway {
  charge(request: ChargeRequest, signal: AbortSignal): Promise<PaymentDecision>;
}

export interface PaymentRules {
  readonly amountLimit: number;
  /** How long each simulated call takes (`PAYMENT_LATENCY_MS`). */
  readonly latencyMs: number;
}

/**
 * The simulated provider: each call takes `latencyMs`, and the decision depends on the request
 * alone (decidePayment), so a repeat with the same idempotency key gets the same answer, as a
 * real provider's idempotency keys promise.
 */
export function simulatedGateway(rules: PaymentRules): PaymentGateway {
  return {
    async charge(request, signal) {
      if (rules.latencyMs > 0) await sleep(rules.latencyMs, undefined, { signal });
      return decidePayment(request, rules);
    },
  };
}
