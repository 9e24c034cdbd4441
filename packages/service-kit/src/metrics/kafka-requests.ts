import { Counter, type Registry } from 'prom-client';

/**
 * `kafka_requests_total{api}`: the requests this process sent to Kafka, by API (Produce,
 * Fetch, OffsetCommit, Heartbeat...), so what each role costs the brokers can be read per
 * role and per order. Counted on the kafkajs client; the platformatic client leaves it at 0.
 */
export function createKafkaRequestsMetric(registry: Registry): (apiName: string) => void {
  const requests = new Counter({
    name: 'kafka_requests_total',
    help: 'Requests this process sent to Kafka and had answered, by API (kafkajs client only)',
    labelNames: ['api'],
    registers: [registry],
  });
  return (apiName) => requests.inc({ api: apiName });
}
