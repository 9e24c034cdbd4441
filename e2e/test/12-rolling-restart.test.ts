import { it } from 'vitest';
import { rollingRestart } from '../src/scenarios/rolling-restart.ts';

// The cluster's faults for both clients in one run (a second run would cost a three-node
// cluster again): order-service on the port's second adapter, payment-service on kafkajs.
it('three-node cluster: a rolling restart under load, each node back in sync before the next; nothing is lost; order-service on @platformatic/kafka', () =>
  rollingRestart({ 'order-service': 'platformatic', 'payment-service': 'kafkajs' }));
