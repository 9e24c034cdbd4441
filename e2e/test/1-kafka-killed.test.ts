import { it } from 'vitest';
import { kafkaKilled } from '../src/scenarios/kafka-killed.ts';

it('Kafka SIGKILLed mid-flight: the API keeps answering 201, the backlog grows, then drains', () =>
  kafkaKilled('kafkajs'));
