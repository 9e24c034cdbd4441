import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Stack, findFreePort, pollUntil, urlAsLogin } from '@outbox-inbox/infra';
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import { formatTraceparent, startTrace } from '@outbox-inbox/outbox/trace';
import pg from 'pg';
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { migrateDatabase } from '../../src/index.ts';

const serviceDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function startMain(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, ['src/main.ts', ...args], {
    cwd: serviceDir,
    // Only what the test passes: the process must not depend on the caller's environment.
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return { child, exited, output: () => output };
}

/** A migrated database of its own and `main.ts --roles api` on a free port, ready. */
async function startReadyApi(databasePrefix: string, env: Record<string, string> = {}) {
  const stack = Stack.open(inject('stackName'));
  const url = await stack.createDatabase(`${databasePrefix}_${randomUUID().slice(0, 8)}`);
  await migrateDatabase({ url, logger: pino({ level: 'silent' }) });
  const port = await findFreePort();
  const api = startMain(['--roles', 'api'], {
    DATABASE_URL: url,
    PORT: String(port),
    HOST: '127.0.0.1',
    ...env,
  });
  try {
    await pollUntil(async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).ok, {
      timeoutMs: 30_000,
      description: 'the api to be ready',
    });
  } catch (error) {
    api.child.kill('SIGKILL');
    throw error;
  }
  const createOrder = (headers: Record<string, string>) =>
    fetch(`http://127.0.0.1:${port}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ customerId: 'c', amount: 10, currency: 'EUR' }),
    });
  return { ...api, createOrder, url };
}

describe('src/main.ts', () => {
  it('exits 1 at start when PostgreSQL refuses its login, naming the role, the login and the server, with no stack trace', async () => {
    const stack = Stack.open(inject('stackName'));
    const url = await stack.createDatabase(`refused_login_${randomUUID().slice(0, 8)}`);
    // A login the server does not know: refused like a wrong password, and on trust
    // authentication too. Hex after a letter: never an option, never quoted differently.
    const login = `no-such-login-${randomUUID().slice(0, 8)}`;
    const port = await findFreePort();
    const api = startMain(['--roles', 'api'], {
      DATABASE_URL: urlAsLogin(url, login),
      PORT: String(port),
      HOST: '127.0.0.1',
    });
    const exit = await Promise.race([
      api.exited,
      new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 20_000)),
    ]);
    if (exit === 'running') api.child.kill('SIGKILL');
    expect(exit, `still running 20 s after its start: ${api.output()}`).toBe(1);
    const output = api.output();
    const place = new URL(url);
    expect(output).toContain(`order-api cannot log in to PostgreSQL as "${login}"`);
    expect(output).toContain(`at ${place.host}${place.pathname}`);
    expect(output).toContain('does not exist');
    expect(output).not.toMatch(/^\s+at /m);
  });

  it('prints no password from its DATABASE_URL: not in its log, /metrics or /health, whether PostgreSQL answers or not', async () => {
    // Hex after a letter: the secret cannot be mistaken for anything the process prints.
    const secret = `pw${randomUUID().replaceAll('-', '')}`;
    const withSecret = (url: string): string => {
      const parsed = new URL(url);
      parsed.password = secret;
      return parsed.toString();
    };
    const readable = async (port: number) =>
      Promise.all(
        ['/health/ready', '/health/live', '/metrics', '/docs/json'].map(async (route) => {
          const response = await fetch(`http://127.0.0.1:${port}${route}`);
          return `${route} ${response.status}: ${await response.text()}`;
        }),
      );

    // PostgreSQL answers (the test server trusts loopback, so any password logs in).
    const stack = Stack.open(inject('stackName'));
    const url = await stack.createDatabase(`orders_secret_${randomUUID().slice(0, 8)}`);
    await migrateDatabase({ url, logger: pino({ level: 'silent' }) });
    const port = await findFreePort();
    const api = startMain(['--roles', 'api'], {
      DATABASE_URL: withSecret(url),
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'debug',
    });
    let served: string[];
    try {
      await pollUntil(async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).ok, {
        timeoutMs: 30_000,
        description: 'the api to be ready',
      });
      const created = await fetch(`http://127.0.0.1:${port}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ customerId: 'c', amount: 10, currency: 'EUR' }),
      });
      expect(created.status).toBe(201);
      served = await readable(port);
    } finally {
      api.child.kill('SIGTERM');
    }
    expect(await api.exited).toBe(0);

    // Nothing listens on this port: every connection fails, readiness says so.
    const nowhere = new URL(url);
    nowhere.port = String(await findFreePort());
    const downPort = await findFreePort();
    const down = startMain(['--roles', 'api'], {
      DATABASE_URL: withSecret(nowhere.toString()),
      PORT: String(downPort),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'debug',
    });
    let servedDown: string[];
    try {
      await pollUntil(
        async () => (await fetch(`http://127.0.0.1:${downPort}/health/ready`)).status === 503,
        { timeoutMs: 30_000, description: 'the api to answer that its database is unreachable' },
      );
      servedDown = await readable(downPort);
    } finally {
      down.child.kill('SIGTERM');
    }
    await down.exited;

    for (const text of [...served, ...servedDown, api.output(), down.output()]) {
      expect(text).not.toContain(secret);
    }
    // The checks above looked at something: the log and the answers are not empty.
    expect(api.output()).toContain('"msg":"stopped"');
    expect(servedDown.join('\n')).toContain('unreachable');
  });

  it('exits 1 with a message naming the bad variable', async () => {
    const missing = startMain(['--roles', 'api'], {});
    expect(await missing.exited).toBe(1);
    expect(missing.output()).toContain(
      'invalid configuration: DATABASE_URL is required but not set',
    );

    const badPort = startMain(['--roles', 'api'], {
      DATABASE_URL: 'postgres://localhost/x',
      PORT: 'http',
    });
    expect(await badPort.exited).toBe(1);
    expect(badPort.output()).toContain('PORT must be an integer');

    const kafkaless = startMain(['--roles', 'relay'], { DATABASE_URL: 'postgres://localhost/x' });
    expect(await kafkaless.exited).toBe(1);
    expect(kafkaless.output()).toContain('KAFKA_BROKERS is required');
  });

  it('serves the api role and stops gracefully on SIGTERM', async () => {
    const api = await startReadyApi('orders_main');
    try {
      const created = await api.createOrder({ 'x-request-id': 'req-from-test' });
      expect(created.status).toBe(201);
      expect(created.headers.get('x-request-id')).toBe('req-from-test');
      // The process names its role to PostgreSQL: pg_stat_activity tells the roles apart.
      const client = new pg.Client({ connectionString: api.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ application_name: string }>(
          `SELECT DISTINCT application_name FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()`,
        );
        expect(rows.map((row) => row.application_name)).toEqual(['order-api']);
      } finally {
        await client.end();
      }
    } finally {
      api.child.kill('SIGTERM');
    }
    expect(await api.exited).toBe(0);
    expect(api.output()).toContain('"reqId":"req-from-test"');
    expect(api.output()).toContain('"msg":"stopped"');
  });

  it('exports its spans over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set', async () => {
    const exports: { path: string | undefined; type: string | undefined; body: Buffer }[] = [];
    const collector = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        exports.push({
          path: request.url,
          type: request.headers['content-type'],
          body: Buffer.concat(chunks),
        });
        response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const collectorPort = (collector.address() as AddressInfo).port;
    const api = await startReadyApi('orders_otlp', {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collectorPort}`,
    });
    const caller = startTrace();
    try {
      const created = await api.createOrder({ traceparent: formatTraceparent(caller) });
      expect(created.status).toBe(201);
    } finally {
      // Stopping flushes the spans still batched.
      api.child.kill('SIGTERM');
    }
    expect(await api.exited).toBe(0);
    collector.close();
    const body = Buffer.concat(exports.map((one) => one.body));
    expect(exports.map((one) => [one.path, one.type])).toContainEqual([
      '/v1/traces',
      'application/x-protobuf',
    ]);
    // Protobuf keeps strings as UTF-8 and ids as raw bytes.
    for (const expected of ['order-service', 'POST /orders', 'enqueue order.events']) {
      expect(body.includes(Buffer.from(expected)), expected).toBe(true);
    }
    expect(body.includes(Buffer.from(caller.traceId, 'hex')), 'the trace id').toBe(true);
  });
});
