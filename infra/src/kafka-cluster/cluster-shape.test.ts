import { describe, expect, it } from 'vitest';
import { isKafkaNodeName, kafkaNodeName, resolveKafkaBrokers } from './cluster-shape.ts';

describe('the shape of a stack’s Kafka', () => {
  it('keeps the lone broker named `kafka` and numbers the nodes of a cluster from 1', () => {
    expect(kafkaNodeName(1, 1)).toBe('kafka');
    expect([1, 2, 3].map((id) => kafkaNodeName(id, 3))).toEqual(['kafka-1', 'kafka-2', 'kafka-3']);
  });

  it('tells Kafka nodes from other components', () => {
    for (const name of ['kafka', 'kafka-1', 'kafka-12']) expect(isKafkaNodeName(name)).toBe(true);
    for (const name of ['kafka-0', 'kafka-', 'postgres', 'kafka-consumer', 'my-kafka-1']) {
      expect(isKafkaNodeName(name)).toBe(false);
    }
  });

  it('takes the option over STACK_KAFKA_BROKERS, and one broker when neither is set', () => {
    expect(resolveKafkaBrokers(undefined, {})).toBe(1);
    expect(resolveKafkaBrokers(undefined, { STACK_KAFKA_BROKERS: '3' })).toBe(3);
    expect(resolveKafkaBrokers(1, { STACK_KAFKA_BROKERS: '3' })).toBe(1);
  });

  it('refuses a count that is not a small whole number, naming where it came from', () => {
    expect(() => resolveKafkaBrokers(undefined, { STACK_KAFKA_BROKERS: 'three' })).toThrow(
      /STACK_KAFKA_BROKERS must be a whole number/,
    );
    expect(() => resolveKafkaBrokers(0, {})).toThrow(/--kafka-brokers must be/);
    expect(() => resolveKafkaBrokers(2.5, {})).toThrow(/--kafka-brokers must be/);
    expect(() => resolveKafkaBrokers(6, {})).toThrow(/from 1 to 5/);
  });
});
