import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { findFreePort, findRepoRoot, pollUntil, Stack } from '@outbox-inbox/infra';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboardApp } from '../../src/dashboard/dashboard-app.ts';
import { LoadGenerator } from '../../src/dashboard/load-generator.ts';
import { parsePrometheusText } from '../../src/dashboard/prometheus-text.ts';
import { startDashboard, type RunningDashboard } from '../../src/dashboard/start-dashboard.ts';
import { SystemPoints } from '../../src/dashboard/system-point.ts';
import type { DashboardState } from '../../src/dashboard/system-sampler.ts';
import { componentNames } from '../../src/system/role-processes.ts';
import { startServices } from '../../src/system/start-services.ts';
import { orderService } from '@outbox-inbox/order-service';
import { paymentService } from '@outbox-inbox/payment-service';
import { launchChromium } from './chromium.ts';

const screenshots = path.join(findRepoRoot(), 'e2e', 'report', 'dashboard');
let stack: Stack;
let dashboard: RunningDashboard;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;

beforeAll(async () => {
  // Its own stack: the test kills Kafka, which nothing else in the run may see.
  stack = await Stack.up({ name: `dashboard-${randomUUID().slice(0, 8)}`, kafkaHeapMb: 512 });
  const ports: Record<string, number> = {};
  for (const name of componentNames) ports[name] = await findFreePort();
  const running = await startServices(stack, { ports, logLevel: 'warn' });
  dashboard = await startDashboard({
    stack,
    orderApiUrl: running.of(orderService).apiUrl,
    databaseUrls: [running.of(orderService).databaseUrl, running.of(paymentService).databaseUrl],
    port: 0,
    intervalMs: 500,
  });
  browser = await launchChromium();
  page = await browser.context.newPage();
  mkdirSync(screenshots, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await dashboard?.stop();
  await stack?.down();
});

/** What the page shows for a component: `up`, `down` or `working…`. */
async function componentState(name: string): Promise<string | null> {
  return page.locator(`tr[data-component="${name}"] .state`).textContent();
}

/** The latest value a chart shows for one series (NaN while it shows none). */
async function chartValue(chart: string, series: string, on: Page = page): Promise<number> {
  const value = on.locator(`#chart-${chart} .value[data-series="${series}"]`);
  if ((await value.count()) === 0) return Number.NaN;
  return Number(await value.textContent());
}

async function untilPageShows(
  description: string,
  holds: () => Promise<boolean>,
  timeoutMs = 60_000,
) {
  await pollUntil(holds, {
    timeoutMs,
    intervalMs: 250,
    description: `the page to show ${description}`,
  });
}

async function orderStatuses(): Promise<string[]> {
  return page
    .locator('#orders tbody tr')
    .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-status') ?? ''));
}

describe('the dashboard, in Chromium, on a running system', () => {
  it('shows every component up, with its pid', async () => {
    await page.goto(dashboard.url);
    const names = stack.status().map((c) => c.name);
    expect(names).toEqual(expect.arrayContaining(['postgres', 'kafka', ...componentNames]));
    for (const name of names) {
      await untilPageShows(`${name} up`, async () => (await componentState(name)) === 'up');
      const pid = await page.locator(`tr[data-component="${name}"] .pid`).textContent();
      expect(pid).toBe(String(stack.pid(name)));
      // Each says what it does, not just its kind of component.
      const what = await page.locator(`tr[data-component="${name}"] td.muted`).textContent();
      expect(what, name).not.toMatch(/^(process|server)$/);
    }
    await expect(page.locator('#connection').getAttribute('data-state')).resolves.toBe('live');
  });

  it('starts a load and shows orders reaching PAID, each with its journey', async () => {
    await page.fill('#load-rate', '5');
    await page.click('#load-start');
    await untilPageShows(
      'orders accepted per second',
      async () => (await chartValue('orders-accepted', 'accepted')) > 0,
    );
    await untilPageShows('PAID orders', async () => (await orderStatuses()).includes('PAID'));
    // The polling relays' backlog is charted, not the CDC relay's replication slots.
    await expect(page.locator('#chart-outbox-backlog').count()).resolves.toBe(1);
    await expect(page.locator('#chart-slot-lag-bytes').count()).resolves.toBe(0);
    const paid = page.locator('#orders tbody tr[data-status="PAID"] .journey').first();
    await expect(paid.textContent()).resolves.toMatch(/PENDING \+\d+ ms → PAID \+\d+ ms/);
    const duplicates = page.locator('#orders tbody tr[data-status="PAID"] .duplicates').first();
    await expect(duplicates.textContent()).resolves.toMatch(/^duplicates absorbed: \d+$/);
    await page.screenshot({
      path: path.join(screenshots, '1-all-up-under-load.png'),
      fullPage: true,
    });
  });

  it('kill kafka: Kafka shows down and the outbox backlog rises', async () => {
    await page.click('tr[data-component="kafka"] button[data-action="kill"]');
    await untilPageShows('kafka down', async () => (await componentState('kafka')) === 'down');
    expect(stack.isRunning('kafka')).toBe(false);
    // The api still takes orders; the relay cannot publish them.
    await untilPageShows(
      'order-service outbox backlog rising',
      async () => (await chartValue('outbox-backlog', 'order-service')) >= 10,
    );
    await untilPageShows(
      'the oldest unpublished event ageing',
      async () => (await chartValue('oldest-unpublished', 'order-service')) >= 2,
    );
    await page.screenshot({ path: path.join(screenshots, '2-kafka-killed.png'), fullPage: true });
  });

  it('start kafka: the backlog drains to zero and the orders reach PAID', async () => {
    await page.click('tr[data-component="kafka"] button[data-action="start"]');
    await untilPageShows('kafka up', async () => (await componentState('kafka')) === 'up', 120_000);
    expect(stack.isRunning('kafka')).toBe(true);
    await page.click('#load-stop');
    await untilPageShows(
      'the load stopped',
      async () => (await page.locator('#load-status').getAttribute('data-running')) === 'false',
    );
    for (const service of ['order-service', 'payment-service']) {
      await untilPageShows(
        `${service} outbox backlog at zero`,
        async () => (await chartValue('outbox-backlog', service)) === 0,
        120_000,
      );
    }
    await untilPageShows(
      'every order shown PAID',
      async () => {
        const statuses = await orderStatuses();
        return statuses.length > 0 && statuses.every((s) => s === 'PAID');
      },
      120_000,
    );
    await page.screenshot({
      path: path.join(screenshots, '3-kafka-back-drained.png'),
      fullPage: true,
    });
  });

  it('kill payment-processor: the inbox backlog rises; start it: the backlog drains', async () => {
    await page.click('#load-start');
    await page.click('tr[data-component="payment-processor"] button[data-action="kill"]');
    await untilPageShows(
      'payment-processor down',
      async () => (await componentState('payment-processor')) === 'down',
    );
    // The inbox writer goes on storing what arrives; only the processing waits.
    await untilPageShows(
      'payment-service inbox backlog rising',
      async () => (await chartValue('inbox-backlog', 'payment-service')) >= 5,
    );
    await page.screenshot({
      path: path.join(screenshots, '4-payment-processor-killed.png'),
      fullPage: true,
    });
    await page.click('tr[data-component="payment-processor"] button[data-action="start"]');
    await untilPageShows(
      'payment-processor up',
      async () => (await componentState('payment-processor')) === 'up',
    );
    await page.click('#load-stop');
    await untilPageShows(
      'payment-service inbox backlog at zero',
      async () => (await chartValue('inbox-backlog', 'payment-service')) === 0,
      120_000,
    );
    await untilPageShows(
      'every order shown PAID',
      async () => {
        const statuses = await orderStatuses();
        return statuses.length > 0 && statuses.every((s) => s === 'PAID');
      },
      120_000,
    );
  });

  it('refuses the buttons to any other origin', async () => {
    const kill = `${dashboard.url}/api/components/order-relay/kill`;
    const noOrigin = await fetch(kill, { method: 'POST' });
    expect(noOrigin.status).toBe(403);
    const otherOrigin = await fetch(kill, {
      method: 'POST',
      headers: { origin: 'http://evil.example' },
    });
    expect(otherOrigin.status).toBe(403);
    await expect(otherOrigin.json()).resolves.toMatchObject({
      reason: expect.stringMatching(/evil\.example/),
    });
    expect(stack.isRunning('order-relay')).toBe(true);
  });

  it('answers no page or state to a request that names another host (DNS rebinding)', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const url = new URL(`${dashboard.url}/api/state`);
      request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          headers: { host: 'evil.example:80' },
        },
        (response) => {
          response.resume();
          resolve(response.statusCode);
        },
      )
        .on('error', reject)
        .end();
    });
    expect(status).toBe(403);
  });
});

describe('the dashboard in CDC mode, in Chromium', () => {
  /** The metrics of a CDC relay role, as its /metrics answers them. */
  const cdcRelay = (connector: string, running: number, bytes: number, seconds: number) =>
    parsePrometheusText(
      `outbox_cdc_connector_running{connector="${connector}"} ${running}\n` +
        `outbox_cdc_slot_lag_bytes{connector="${connector}"} ${bytes}\n` +
        `outbox_cdc_slot_lag_seconds{connector="${connector}"} ${seconds}\n`,
    );

  // Kafka Connect is not started: a JVM that takes half a minute would only feed these gauges,
  // whose reading SystemPoints' unit tests cover. The page gets what the sampler would send.
  it("charts each service's replication slot and connector in place of the outbox backlog", async () => {
    const points = new SystemPoints();
    const stateAt = (at: number, paymentConnectorRunning: number): DashboardState => ({
      relayMode: 'cdc',
      components: stack.status(),
      history: [
        points.next(at, [
          {
            component: 'order-relay',
            service: 'order-service',
            role: 'relay',
            samples: cdcRelay('orders', 1, 65_536, 12),
          },
          {
            component: 'payment-relay',
            service: 'payment-service',
            role: 'relay',
            samples: cdcRelay('payments', paymentConnectorRunning, 0, 0),
          },
        ]),
      ],
      orders: [],
      ordersError: null,
    });
    let state = stateAt(Date.now(), 0);
    const listeners = new Set<(state: DashboardState) => void>();
    const load = new LoadGenerator('http://127.0.0.1:9');
    const app = buildDashboardApp({
      stack,
      load,
      state: () => state,
      subscribe(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const cdcPage = await browser.context.newPage();
    try {
      await cdcPage.goto(url);
      await untilPageShows(
        'the relay mode',
        async () => (await cdcPage.locator('#relay-mode').getAttribute('data-mode')) === 'cdc',
      );
      await expect(chartValue('slot-lag-seconds', 'order-service', cdcPage)).resolves.toBe(12);
      await expect(chartValue('slot-lag-bytes', 'order-service', cdcPage)).resolves.toBe(65_536);
      await expect(chartValue('connector-running', 'order-service', cdcPage)).resolves.toBe(1);
      await expect(chartValue('connector-running', 'payment-service', cdcPage)).resolves.toBe(0);
      // No backlog charts: nothing exports the unpublished gauges in CDC mode.
      await expect(cdcPage.locator('#chart-outbox-backlog').count()).resolves.toBe(0);
      await expect(cdcPage.locator('#chart-oldest-unpublished').count()).resolves.toBe(0);
      const relay = cdcPage.locator('tr[data-component="order-relay"] td.muted');
      await expect(relay.textContent()).resolves.toMatch(/replication slot/);

      state = stateAt(Date.now(), 1);
      for (const listener of listeners) listener(state);
      await untilPageShows(
        "payment-service's connector running again",
        async () => (await chartValue('connector-running', 'payment-service', cdcPage)) === 1,
      );
      await cdcPage.screenshot({ path: path.join(screenshots, '5-cdc-mode.png'), fullPage: true });
    } finally {
      await cdcPage.close();
      await load.close();
      app.server.closeAllConnections();
      await app.close();
    }
  });
});
