import { orderService } from '@outbox-inbox/order-service';
import { paymentService } from '@outbox-inbox/payment-service';
import type { ServiceDescriptor } from '@outbox-inbox/service-kit';

/** The services of the system, in start order: everything the launcher runs comes from here. */
export const services: readonly ServiceDescriptor[] = Object.freeze([orderService, paymentService]);
