import type { Worker } from '@outbox-inbox/outbox';
import { startServiceRelay, type ServiceRelayDeps } from '@outbox-inbox/service-kit';
import type { PaymentDatabase } from '../database/schema.ts';

/** The `relay` role: publishes the payment outbox (PaymentCompleted, PaymentFailed, PaymentRefunded) to payment.events. */
export async function startPaymentRelay(deps: ServiceRelayDeps<PaymentDatabase>): Promise<Worker> {
  return startServiceRelay(deps);
}
