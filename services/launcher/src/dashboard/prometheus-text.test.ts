import { describe, expect, it } from 'vitest';
import { parsePrometheusText, sumOf } from './prometheus-text.ts';

const text = `# HELP http_requests_total HTTP requests
# TYPE http_requests_total counter
http_requests_total{method="POST",route="/orders",status="201"} 7
http_requests_total{method="GET",route="/orders/:id",status="200"} 3
kafka_consumer_lag{group="g",topic="t",partition="0"} 4
kafka_consumer_lag{group="g",topic="t",partition="1"} 5
outbox_unpublished_events 12
weird_label{path="a\\"b"} 1
not a sample line
`;

describe('parsePrometheusText', () => {
  it('reads names, labels (escapes included) and values, and skips comments', () => {
    const samples = parsePrometheusText(text);
    expect(samples).toHaveLength(6);
    expect(samples[0]).toEqual({
      name: 'http_requests_total',
      labels: { method: 'POST', route: '/orders', status: '201' },
      value: 7,
    });
    expect(samples.find((s) => s.name === 'weird_label')?.labels).toEqual({ path: 'a"b' });
  });

  it('sums the samples whose labels match', () => {
    const samples = parsePrometheusText(text);
    expect(sumOf(samples, 'kafka_consumer_lag', { group: 'g' })).toBe(9);
    expect(sumOf(samples, 'http_requests_total', { method: 'POST', status: '201' })).toBe(7);
    expect(sumOf(samples, 'outbox_unpublished_events')).toBe(12);
    expect(sumOf(samples, 'absent_metric')).toBe(0);
  });
});
