import { findRepoRoot, type Stack } from '@outbox-inbox/infra';
import { migrateDatabase as migrateOrders } from '@outbox-inbox/order-service';
import { migrateDatabase as migratePayments } from '@outbox-inbox/payment-service';
import { pino } from 'pino';
import {
  devServicePorts,
  serviceComponents,
  type ServiceComponentsOptions,
} from './service-components.ts';

export interface RunningServices {
  readonly orderApiUrl: string;
  readonly paymentApiUrl: string;
  readonly orderDatabaseUrl: string;
  readonly paymentDatabaseUrl: string;
}

/**
 * On a running stack: creates the two service databases, migrates them, then adds every role of
 * both services as a supervised component and waits until each is ready.
 */
export async function startServices(
  stack: Stack,
  options: Pick<ServiceComponentsOptions, 'ports' | 'env' | 'componentEnv' | 'logLevel'> = {},
): Promise<RunningServices> {
  const orderDatabaseUrl = await stack.createDatabase('orders');
  const paymentDatabaseUrl = await stack.createDatabase('payments');
  const logger = pino({ level: 'warn' });
  await migrateOrders({ url: orderDatabaseUrl, logger });
  await migratePayments({ url: paymentDatabaseUrl, logger });
  const components = serviceComponents({
    ...options,
    repoRoot: findRepoRoot(),
    orderDatabaseUrl,
    paymentDatabaseUrl,
    kafkaBrokers: stack.kafkaBrokers,
  });
  // One at a time: each addProcess rewrites the stack's state file.
  for (const component of components) await stack.addProcess(component);
  const ports = options.ports ?? devServicePorts;
  return {
    orderApiUrl: `http://127.0.0.1:${ports['order-api']}`,
    paymentApiUrl: `http://127.0.0.1:${ports['payment-api']}`,
    orderDatabaseUrl,
    paymentDatabaseUrl,
  };
}
