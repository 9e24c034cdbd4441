/**
 * The dev stack listens on fixed ports, the same ones infra/docker-compose.yml publishes, so
 * README commands and a person's tools keep working across restarts. Tests use free ports.
 */
export function devPorts(env: NodeJS.ProcessEnv = process.env): {
  postgres: number;
  kafka: number;
  kafkaController: number;
  connect: number;
} {
  return {
    postgres: Number(env['STACK_POSTGRES_PORT'] ?? 55432),
    kafka: Number(env['STACK_KAFKA_PORT'] ?? 19092),
    kafkaController: Number(env['STACK_KAFKA_CONTROLLER_PORT'] ?? 19093),
    connect: Number(env['STACK_CONNECT_PORT'] ?? 18083),
  };
}
