import { it } from 'vitest';
import { relayKilled } from '../src/scenarios/relay-killed.ts';

it('order relay SIGKILLed repeatedly, also between the Kafka ack and the commit: duplicates delivered and absorbed', () =>
  relayKilled('kafkajs'));
