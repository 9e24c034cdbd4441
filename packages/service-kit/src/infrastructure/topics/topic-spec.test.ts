import { describe, expect, it } from 'vitest';
import { planTopic } from './topic-spec.ts';

const spec = {
  name: 'order.events',
  partitions: 6,
  replicationFactor: 3,
  minInsyncReplicas: 2,
  configs: { 'retention.ms': '1000' },
};

describe('planTopic', () => {
  it('follows the cluster: 1 replica on one broker, 3 on three, min ISR below the factor', () => {
    expect(planTopic(spec, { brokers: 1 })).toMatchObject({
      replicationFactor: 1,
      configs: { 'min.insync.replicas': '1', 'retention.ms': '1000' },
    });
    expect(planTopic(spec, { brokers: 3 })).toMatchObject({
      replicationFactor: 3,
      configs: { 'min.insync.replicas': '2' },
    });
    expect(planTopic(spec, { brokers: 5 }).replicationFactor).toBe(3);
  });

  it('refuses a replication factor above the broker count', () => {
    expect(() => planTopic(spec, { brokers: 1, replicationFactor: 3 })).toThrow(
      /topic order.events: replication factor 3 is above the cluster's 1 broker/,
    );
  });
});
