import { describe, expect, it } from 'vitest';
import { parsePrometheusText } from './prometheus-text.ts';
import { SystemPoints, type ScrapedProcess } from './system-point.ts';

function scraped(component: string, service: string, role: string, text: string): ScrapedProcess {
  return { component, service, role, samples: parsePrometheusText(text) };
}

const ordersCreated = (n: number) =>
  `http_requests_total{method="POST",route="/orders",status="201"} ${n}\n`;

describe('SystemPoints', () => {
  it("counts a service's database gauges once, whatever number of its processes report them", () => {
    const gauges = 'outbox_unpublished_events 12\ninbox_dead_events 2\n';
    const point = new SystemPoints().next(1000, [
      scraped('order-api', 'order-service', 'api', gauges),
      scraped('order-relay', 'order-service', 'relay', gauges),
      scraped('order-consumer', 'order-service', 'consumer', gauges),
    ]);
    expect(point.services['order-service']?.unpublished).toBe(12);
    expect(point.services['order-service']?.deadInboxRows).toBe(2);
  });

  it('takes consumer lag once per partition and sums the partitions of a group', () => {
    const lag = (partition: number, value: number) =>
      `kafka_consumer_lag{group="g",topic="t",partition="${partition}"} ${value}\n`;
    const point = new SystemPoints().next(1000, [
      scraped('payment-consumer-1', 'payment-service', 'consumer', lag(0, 7) + lag(1, 5)),
      scraped('payment-consumer-2', 'payment-service', 'consumer', lag(0, 7) + lag(1, 5)),
    ]);
    expect(point.consumerLag).toEqual({ g: 12 });
  });

  it('turns the api counter into orders per second, and a restarted process counts from zero', () => {
    const points = new SystemPoints();
    points.next(0, [scraped('order-api', 'order-service', 'api', ordersCreated(100))]);
    const steady = points.next(2000, [
      scraped('order-api', 'order-service', 'api', ordersCreated(110)),
    ]);
    expect(steady.ordersAcceptedPerSecond).toBe(5);
    const restarted = points.next(3000, [
      scraped('order-api', 'order-service', 'api', ordersCreated(4)),
    ]);
    expect(restarted.ordersAcceptedPerSecond).toBe(4);
  });

  it("reads each service's replication slot from its CDC relay, and none with the polling relay", () => {
    const cdcRelay = (connector: string, running: number, bytes: number, seconds: number) =>
      `outbox_cdc_connector_running{connector="${connector}"} ${running}\n` +
      `outbox_cdc_slot_lag_bytes{connector="${connector}"} ${bytes}\n` +
      `outbox_cdc_slot_lag_seconds{connector="${connector}"} ${seconds}\n`;
    const database = 'inbox_backlog_events 0\noutbox_failed_events 0\n';
    const cdc = new SystemPoints().next(1000, [
      scraped('order-api', 'order-service', 'api', database),
      scraped('order-relay', 'order-service', 'relay', database + cdcRelay('orders', 1, 4096, 3)),
      scraped('payment-relay', 'payment-service', 'relay', cdcRelay('payments', 0, 0, 0)),
    ]);
    expect(cdc.replicationSlots).toEqual({
      'order-service': { lagBytes: 4096, lagSeconds: 3, connectorRunning: true },
      'payment-service': { lagBytes: 0, lagSeconds: 0, connectorRunning: false },
    });

    const polling = new SystemPoints().next(1000, [
      scraped('order-relay', 'order-service', 'relay', 'outbox_unpublished_events 5\n'),
    ]);
    expect(polling.replicationSlots).toEqual({});
  });

  it('shows the worse of two reports of one slot, and a connector not reported as not running', () => {
    const point = new SystemPoints().next(1000, [
      scraped(
        'order-relay-1',
        'order-service',
        'relay',
        'outbox_cdc_connector_running{connector="orders"} 1\n' +
          'outbox_cdc_slot_lag_bytes{connector="orders"} 100\n' +
          'outbox_cdc_slot_lag_seconds{connector="orders"} 9\n',
      ),
      scraped(
        'order-relay-2',
        'order-service',
        'relay',
        'outbox_cdc_slot_lag_bytes{connector="orders"} 700\n' +
          'outbox_cdc_slot_lag_seconds{connector="orders"} 2\n',
      ),
    ]);
    expect(point.replicationSlots['order-service']).toEqual({
      lagBytes: 700,
      lagSeconds: 9,
      connectorRunning: false,
    });
  });
});
