/**
 * Kafka topics of the system. Every event is keyed by its order id, so all events of one order
 * land on one partition and are consumed in the order they were produced.
 */
export const topics = Object.freeze({
  orderEvents: 'order.events',
  paymentEvents: 'payment.events',
} as const);

export type Topic = (typeof topics)[keyof typeof topics];

/**
 * A topic as the system needs it, provisioned by the migrate step of the service that
 * produces to it; a topic that exists with other settings is refused, never silently used.
 */
export interface TopicDeclaration {
  readonly name: Topic;
  /** The service whose outbox publishes to it, and whose migrate step provisions it. */
  readonly owner: 'order-service' | 'payment-service';
  /**
   * Fixed for the topic's life: adding partitions later moves keys to other partitions and
   * breaks per-key order for the events in flight.
   */
  readonly partitions: number;
  /** Replicas on a cluster of this many brokers or more; a smaller cluster gets one per broker. */
  readonly replicationFactor: number;
  /**
   * With `acks=-1`, a write succeeds only when this many replicas have it: one broker may
   * fail without losing an acknowledged event. Capped below the replication factor, so a
   * single broker still accepts writes.
   */
  readonly minInsyncReplicas: number;
  /** Topic-level configs (Kafka names), set at creation and restored when they drift. */
  readonly configs: Readonly<Record<string, string>>;
}

const week = String(7 * 24 * 3600 * 1000);

const eventTopicConfigs = Object.freeze({
  'cleanup.policy': 'delete',
  // The outbox is the source of truth and can replay (R-DIST-OBX-3); a week covers an outage.
  'retention.ms': week,
  // The producer's time: when the relay sent it, not when the broker wrote it.
  'message.timestamp.type': 'CreateTime',
});

export const topicDeclarations: readonly TopicDeclaration[] = Object.freeze([
  Object.freeze({
    name: topics.orderEvents,
    owner: 'order-service',
    partitions: 6,
    replicationFactor: 3,
    minInsyncReplicas: 2,
    configs: eventTopicConfigs,
  }),
  Object.freeze({
    name: topics.paymentEvents,
    owner: 'payment-service',
    partitions: 6,
    replicationFactor: 3,
    minInsyncReplicas: 2,
    configs: eventTopicConfigs,
  }),
]);

/** The topics a service publishes to, which its migrate program provisions. */
export function topicsOwnedBy(service: string): readonly TopicDeclaration[] {
  return topicDeclarations.filter((topic) => topic.owner === service);
}
