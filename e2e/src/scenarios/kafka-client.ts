/** The client libraries the services' Kafka port runs on (`KAFKA_CLIENT`). */
export type KafkaClientName = 'kafkajs' | 'platformatic';

/**
 * A scenario's name and its services' settings on `client`: the default client keeps the
 * scenario's plain name, another one is named in the report row.
 */
export function onClient(
  name: string,
  client: KafkaClientName,
): { name: string; settings: Record<string, string> } {
  return {
    name: client === 'kafkajs' ? name : `${name} on ${client}`,
    settings: { KAFKA_CLIENT: client },
  };
}
