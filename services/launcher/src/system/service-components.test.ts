import { describe, expect, it } from 'vitest';
import { LauncherError } from '../launcher-error.ts';
import { roleComponent } from './role-component.ts';
import { componentNames, roleProcesses } from './role-processes.ts';
import { devServicePorts, serviceComponents } from './service-components.ts';
import { services } from './services.ts';

const databaseUrls = {
  'order-service': 'postgres://h/orders',
  'payment-service': 'postgres://h/payments',
};

describe('serviceComponents', () => {
  const components = serviceComponents({
    databaseUrls,
    kafkaBrokers: ['127.0.0.1:1', '127.0.0.1:2'],
    settings: { PAYMENT_AMOUNT_LIMIT: '50000', RELAY_POLL_INTERVAL_MS: '200' },
  });
  const named = (name: string) => components.find((component) => component.name === name);

  it('runs every declared role of both services as its own process on its own port', () => {
    expect(components.map((c) => c.name)).toEqual(
      services.flatMap((service) =>
        service.roles.map((role) => `${service.componentPrefix}-${role}`),
      ),
    );
    expect(components.map((c) => c.name)).toContain('payment-processor');
    expect(componentNames).toEqual(components.map((c) => c.name));
    expect(new Set(Object.values(devServicePorts({}))).size).toBe(componentNames.length);
    expect(named('order-relay')).toMatchObject({
      command: process.execPath,
      args: ['--max-semi-space-size=8', 'src/main.ts', '--roles', 'relay'],
      readiness: { type: 'http', url: 'http://127.0.0.1:3011/health/ready' },
    });
    expect(named('order-relay')?.cwd).toMatch(/services\/order-service\/$/);
    expect(named('order-relay')?.env).toMatchObject({
      DATABASE_URL: 'postgres://h/orders',
      KAFKA_BROKERS: '127.0.0.1:1,127.0.0.1:2',
      OPS_PORT: '3011',
      RELAY_POLL_INTERVAL_MS: '200',
    });
    expect(named('payment-api')?.env).toMatchObject({
      DATABASE_URL: 'postgres://payment-api@h/payments',
      PORT: '3002',
      PAYMENT_AMOUNT_LIMIT: '50000',
    });
  });

  it('connects each role as its own login, the relays as the owner (they may turn CDC)', () => {
    expect(named('order-consumer')?.env['DATABASE_URL']).toBe('postgres://order-consumer@h/orders');
    expect(named('payment-processor')?.env['DATABASE_URL']).toBe(
      'postgres://payment-processor@h/payments',
    );
    expect(named('payment-relay')?.env['DATABASE_URL']).toBe('postgres://h/payments');
  });

  it('gives each service only the settings it reads', () => {
    expect(named('order-api')?.env['PAYMENT_AMOUNT_LIMIT']).toBeUndefined();
    expect(named('order-api')?.env['OPS_PORT']).toBeUndefined();
  });

  it('refuses a setting no service reads', () => {
    expect(() =>
      serviceComponents({ databaseUrls, kafkaBrokers: [], settings: { RELAY_POLL_MS: '1' } }),
    ).toThrow(new LauncherError('UNKNOWN_SETTING', 'no service reads RELAY_POLL_MS'));
  });

  it('takes a port per component from STACK_<COMPONENT>_PORT', () => {
    expect(devServicePorts({ STACK_ORDER_API_PORT: '4001' })).toMatchObject({
      'order-api': 4001,
      'payment-api': 3002,
    });
  });
});

describe('roleProcesses and roleComponent', () => {
  it('runs a role as several processes, each a component of its own', () => {
    const relays = roleProcesses({ 'order-relay': 2 }).filter((p) => p.role === 'relay');
    expect(relays.map((p) => p.name)).toEqual(['order-relay-1', 'order-relay-2', 'payment-relay']);
  });

  it("runs a harness's own command with its own variables", () => {
    const [api] = roleProcesses();
    if (api === undefined) throw new Error('no role');
    const component = roleComponent(api, {
      port: 4000,
      databaseUrl: 'postgres://h/orders',
      kafkaBrokers: [],
      command: { command: 'node', args: ['entry.ts'], cwd: '/x', env: { EXTRA: '1' } },
      readiness: 'live',
    });
    expect(component).toMatchObject({
      command: 'node',
      args: ['entry.ts'],
      cwd: '/x',
      readiness: { type: 'http', url: 'http://127.0.0.1:4000/health/live' },
    });
    expect(component.env).toMatchObject({ EXTRA: '1', PORT: '4000' });
  });
});
