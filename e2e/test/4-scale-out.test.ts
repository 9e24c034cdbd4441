import { it } from 'vitest';
import { scaleOut } from '../src/scenarios/scale-out.ts';

it('two relays per service and two payment consumers and processors, under Kafka and relay kills: per-order order holds', () =>
  scaleOut('kafkajs'));
