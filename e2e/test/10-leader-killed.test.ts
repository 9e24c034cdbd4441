import { it } from 'vitest';
import { leaderKilled } from '../src/scenarios/leader-killed.ts';

// The cluster's faults for both clients in one run (a second run would cost a three-node
// cluster again): payment-service on the port's second adapter, order-service on kafkajs.
it('three-node cluster: the leader of the busiest partition SIGKILLed mid-batch, for each topic; leadership moves and nothing is lost; payment-service on @platformatic/kafka', () =>
  leaderKilled({ 'payment-service': 'platformatic', 'order-service': 'kafkajs' }));
