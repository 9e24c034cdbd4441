import { describe, expect, it } from 'vitest';
import { createEnvReader } from './env-reader.ts';
import { readServiceConfig, wiringEnv } from './service-config.ts';

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
      kafkaClient: 'kafkajs',
      consumerGroupId: 'order-service',
      stallAfterMs: 60_000,
      opsPort: undefined,
      relay: { batchSize: 200, pollIntervalMs: 500, notify: true, mode: 'polling' },
    });
  });

  it('KAFKA_CLIENT picks the client library, and names the allowed ones when wrong', () => {
    const env = { DATABASE_URL: 'postgres://x/y', KAFKA_BROKERS: 'a:1' };
    const config = readServiceConfig(
      createEnvReader({ ...env, KAFKA_CLIENT: 'platformatic' }),
      defaults,
    );
    expect(config.kafkaClient).toBe('platformatic');
    expect(() =>
      readServiceConfig(createEnvReader({ ...env, KAFKA_CLIENT: 'rdkafka' }), defaults),
    ).toThrow(/KAFKA_CLIENT must be one of kafkajs, platformatic/);
  });

  it('RELAY_MODE=cdc needs CONNECT_URL, and says so', () => {
    const env = { DATABASE_URL: 'postgres://x/y', KAFKA_BROKERS: 'a:1', RELAY_MODE: 'cdc' };
    expect(() => readServiceConfig(createEnvReader(env), defaults)).toThrow(
      'CONNECT_URL is required',
    );
    const config = readServiceConfig(
      createEnvReader({ ...env, CONNECT_URL: 'http://connect:8083' }),
      defaults,
    );
    expect(config.relay).toMatchObject({ mode: 'cdc', connectUrl: 'http://connect:8083' });
    expect(() =>
      readServiceConfig(createEnvReader({ ...env, RELAY_MODE: 'debezium' }), defaults),
    ).toThrow(/RELAY_MODE must be one of polling, cdc/);
  });

  it('DATABASE_SESSION_URL takes the sessions (LISTEN, CDC) past a transaction pooler; DATABASE_URL without it', () => {
    const env = { DATABASE_URL: 'postgres://pooler:6432/orders', KAFKA_BROKERS: 'a:1' };
    expect(readServiceConfig(createEnvReader(env), defaults).databaseSessionUrl).toBe(
      'postgres://pooler:6432/orders',
    );
    const direct = readServiceConfig(
      createEnvReader({ ...env, DATABASE_SESSION_URL: 'postgres://primary:5432/orders' }),
      defaults,
    );
    expect(direct).toMatchObject({
      databaseUrl: 'postgres://pooler:6432/orders',
      databaseSessionUrl: 'postgres://primary:5432/orders',
    });
    expect(() =>
      readServiceConfig(createEnvReader({ ...env, DATABASE_SESSION_URL: 'http://x' }), defaults),
    ).toThrow(/DATABASE_SESSION_URL must be a postgres or postgresql URL/);
  });

  it("the api's admission follows the pool size, less the two spare connections, unless set", () => {
    const env = { DATABASE_URL: 'postgres://x/y', DATABASE_POOL_SIZE: '12' };
    const fromPool = readServiceConfig(createEnvReader(env), { ...defaults, needsKafka: false });
    expect(fromPool.admission).toEqual({
      maxInFlight: 10,
      maxWaitMs: 300,
      maxWaiting: 10,
      retryAfterSeconds: 1,
      answerWithinMs: 1000,
    });
    const set = readServiceConfig(
      createEnvReader({
        ...env,
        API_MAX_IN_FLIGHT: '4',
        API_ADMISSION_WAIT_MS: '100',
        API_MAX_WAITING: '2',
        API_ANSWER_WITHIN_MS: '500',
      }),
      { ...defaults, needsKafka: false },
    );
    expect(set.admission).toMatchObject({
      maxInFlight: 4,
      maxWaitMs: 100,
      maxWaiting: 2,
      answerWithinMs: 500,
    });
    // An answer bound the wait alone could use up leaves the work no time.
    expect(() =>
      readServiceConfig(
        createEnvReader({ ...env, API_ADMISSION_WAIT_MS: '800', API_ANSWER_WITHIN_MS: '800' }),
        { ...defaults, needsKafka: false },
      ),
    ).toThrow(/API_ANSWER_WITHIN_MS must be an integer/);
    expect(() =>
      readServiceConfig(createEnvReader({ ...env, API_MAX_IN_FLIGHT: '0' }), {
        ...defaults,
        needsKafka: false,
      }),
    ).toThrow(/API_MAX_IN_FLIGHT must be an integer/);
  });

  it('requires KAFKA_BROKERS only when a role needs Kafka', () => {
    const read = createEnvReader({ DATABASE_URL: 'postgres://x/y' });
    expect(readServiceConfig(read, { ...defaults, needsKafka: false }).kafkaBrokers).toEqual([]);
    expect(() => readServiceConfig(read, defaults)).toThrow('KAFKA_BROKERS is required');
  });
});

describe('wiringEnv', () => {
  const wiring = {
    databaseUrl: 'postgres://h/orders',
    kafkaBrokers: ['a:1', 'b:2'],
    host: '127.0.0.1',
    logLevel: 'warn',
  };

  it('is read back by readServiceConfig: the api on PORT, another role on OPS_PORT', () => {
    const api = readServiceConfig(
      createEnvReader(wiringEnv({ ...wiring, role: 'api', port: 4001 })),
      defaults,
    );
    expect(api).toMatchObject({
      databaseUrl: 'postgres://h/orders',
      kafkaBrokers: ['a:1', 'b:2'],
      host: '127.0.0.1',
      port: 4001,
      opsPort: undefined,
      logLevel: 'warn',
    });
    const relay = readServiceConfig(
      createEnvReader(wiringEnv({ ...wiring, role: 'relay', port: 4011 })),
      defaults,
    );
    expect(relay).toMatchObject({ port: 3001, opsPort: 4011 });
  });

  it('gives a process that runs the api among other roles the api port', () => {
    expect(wiringEnv({ ...wiring, role: 'relay,api,consumer', port: 4001 })).toMatchObject({
      PORT: '4001',
    });
    expect(wiringEnv({ ...wiring, role: 'relay,consumer', port: 4011 })).toMatchObject({
      OPS_PORT: '4011',
    });
  });
});
