import { describe, expect, it } from 'vitest';
import { createEnvReader } from './env-reader.ts';
import { readServiceConfig } from './service-config.ts';

const defaults = { name: 'order-service', port: 3001, needsKafka: true };

describe('readServiceConfig', () => {
  it("applies the service's own defaults and the shared ones", () => {
    const config = readServiceConfig(
      createEnvReader({ DATABASE_URL: 'postgres://x/y', KAFKA_BROKERS: 'a:1,b:2' }),
      defaults,
    );
    expect(config).toMatchObject({
      port: 3001,
      kafkaBrokers: ['a:1', 'b:2'],
      kafkaClientId: 'order-service',
      consumerGroupId: 'order-service',
      opsPort: undefined,
      relay: { batchSize: 200, pollIntervalMs: 500, notify: true, crashAfterPublish: 0 },
    });
  });

  it('requires KAFKA_BROKERS only when a role needs Kafka', () => {
    const read = createEnvReader({ DATABASE_URL: 'postgres://x/y' });
    expect(readServiceConfig(read, { ...defaults, needsKafka: false }).kafkaBrokers).toEqual([]);
    expect(() => readServiceConfig(read, defaults)).toThrow('KAFKA_BROKERS is required');
  });
});
