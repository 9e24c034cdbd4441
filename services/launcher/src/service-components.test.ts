import { describe, expect, it } from 'vitest';
import { componentNames, devServicePorts, serviceComponents } from './service-components.ts';

describe('serviceComponents', () => {
  const components = serviceComponents({
    repoRoot: '/repo',
    orderDatabaseUrl: 'postgres://h/orders',
    paymentDatabaseUrl: 'postgres://h/payments',
    kafkaBrokers: ['127.0.0.1:1', '127.0.0.1:2'],
    componentEnv: { 'order-relay': { FAULT_CRASH_AFTER_PUBLISH: '0.1' } },
  });

  it('runs every role of both services as its own process on its own port', () => {
    expect(components.map((c) => c.name)).toEqual([
      'order-api',
      'order-relay',
      'order-consumer',
      'payment-api',
      'payment-relay',
      'payment-consumer',
      'payment-processor',
    ]);
    expect(new Set(Object.values(devServicePorts)).size).toBe(componentNames.length);
    const relay = components.find((c) => c.name === 'order-relay');
    expect(relay).toMatchObject({
      args: ['--max-semi-space-size=8', 'src/main.ts', '--roles', 'relay'],
      cwd: '/repo/services/order-service',
      readiness: { type: 'http', url: 'http://127.0.0.1:3011/health/ready' },
    });
    expect(relay?.env).toMatchObject({
      DATABASE_URL: 'postgres://h/orders',
      KAFKA_BROKERS: '127.0.0.1:1,127.0.0.1:2',
      OPS_PORT: '3011',
      FAULT_CRASH_AFTER_PUBLISH: '0.1',
    });
    const api = components.find((c) => c.name === 'payment-api');
    expect(api?.env).toMatchObject({ DATABASE_URL: 'postgres://h/payments', PORT: '3002' });
    expect(api?.env['FAULT_CRASH_AFTER_PUBLISH']).toBeUndefined();
  });
});
