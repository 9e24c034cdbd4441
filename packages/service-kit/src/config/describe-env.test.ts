import { describe, expect, it } from 'vitest';
import { describeEnv } from './describe-env.ts';
import { readServiceConfig } from './service-config.ts';

describe('describeEnv', () => {
  it('lists what a config reader reads, with the defaults it applies', () => {
    const variables = describeEnv((read) =>
      readServiceConfig(read, { name: 'order-service', port: 3001, needsKafka: true }),
    );
    const byName = new Map(variables.map((variable) => [variable.name, variable]));
    expect(byName.get('DATABASE_URL')).toEqual({
      name: 'DATABASE_URL',
      default: undefined,
      required: true,
    });
    expect(byName.get('KAFKA_BROKERS')?.required).toBe(true);
    expect(byName.get('PORT')).toEqual({ name: 'PORT', default: '3001', required: false });
    expect(byName.get('OPS_PORT')).toEqual({
      name: 'OPS_PORT',
      default: undefined,
      required: false,
    });
    expect(byName.get('CONSUMER_GROUP_ID')?.default).toBe('order-service');
    expect(byName.get('RELAY_NOTIFY')?.default).toBe('true');
  });

  it('lists only what the reader reads', () => {
    const variables = describeEnv((read) =>
      readServiceConfig(read, { name: 'x', port: 1, needsKafka: false }),
    );
    expect(variables.map((variable) => variable.name)).not.toContain('KAFKA_BROKERS');
  });
});
