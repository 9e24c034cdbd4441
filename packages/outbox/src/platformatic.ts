/**
 * `@outbox-inbox/outbox/platformatic`: the Kafka port on @platformatic/kafka. An entry point of
 * its own, so a process on kafkajs never loads this client (loading it costs more CPU than the
 * rest of a role's modules together).
 */
export { platformaticClient } from './kafka-port/platformatic/platformatic-client.ts';
export type { PlatformaticConnection } from './kafka-port/platformatic/platformatic-connection.ts';
