import { describe, it } from 'vitest';
import { kafkaKilled } from '../src/scenarios/kafka-killed.ts';
import { relayKilled } from '../src/scenarios/relay-killed.ts';
import { scaleOut } from '../src/scenarios/scale-out.ts';

// Scenarios 1, 2 and 4 again with every service on the port's second adapter
// (KAFKA_CLIENT=platformatic): the same faults, the same invariants. The cluster scenarios
// (10, 12, 13) run one service on it in their own run.
describe('on @platformatic/kafka', () => {
  it('1: Kafka SIGKILLed mid-flight; the backlog drains', () => kafkaKilled('platformatic'));
  it('2: the order relay SIGKILLed, also between the ack and the commit', () =>
    relayKilled('platformatic'));
  it('4: two of each worker, under Kafka and relay kills', () => scaleOut('platformatic'));
});
