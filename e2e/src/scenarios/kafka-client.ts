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

/** The client of each service named here; the others run on the default (kafkajs). */
export type ServiceClients = Readonly<Record<string, KafkaClientName>>;

/**
 * A scenario's name and the per-service settings that put each service named in `clients` on
 * its client: one run of a scenario exercises both clients under the same faults (each service
 * produces one topic and consumes the other). The report row says so in a few words: the name
 * also names the scenario's directory, whose socket paths must stay short.
 */
export function onServiceClients(
  name: string,
  clients: ServiceClients,
): { name: string; serviceSettings: Record<string, Record<string, string>> } {
  const used = new Set(Object.values(clients));
  return {
    name: used.size > 1 ? `${name}, both clients` : name,
    serviceSettings: Object.fromEntries(
      Object.entries(clients).map(([service, client]) => [service, { KAFKA_CLIENT: client }]),
    ),
  };
}
