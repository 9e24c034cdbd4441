import { it } from 'vitest';
import { zombieLeader } from '../src/scenarios/zombie-leader.ts';

// The cluster's faults for both clients in one run (a second run would cost a three-node
// cluster again): payment-service on the port's second adapter, order-service on kafkajs.
it('three-node cluster: a partition leader frozen (SIGSTOP) past its session, then thawed as a zombie; it is fenced, rejoins, and nothing is lost or applied twice; payment-service on @platformatic/kafka', () =>
  zombieLeader({ 'payment-service': 'platformatic', 'order-service': 'kafkajs' }));
