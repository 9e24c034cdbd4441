import { InfraError } from '../errors.ts';

/** The name of a Kafka node: `kafka` alone, `kafka-1` … `kafka-N` in a cluster. */
export function kafkaNodeName(nodeId: number, brokers: number): string {
  return brokers === 1 ? 'kafka' : `kafka-${nodeId}`;
}

/** Whether a component name is one of the stack's Kafka nodes. */
export function isKafkaNodeName(name: string): boolean {
  return /^kafka(-[1-9][0-9]*)?$/.test(name);
}

/** Most brokers a stack runs: a cluster of more adds nothing the suite's faults need. */
export const maxKafkaBrokers = 5;

/**
 * How many brokers a stack's Kafka has: the option, else STACK_KAFKA_BROKERS, else one.
 * Checked here, once: a wrong value names where it came from.
 */
export function resolveKafkaBrokers(option: number | undefined, env: NodeJS.ProcessEnv): number {
  const raw = option ?? env['STACK_KAFKA_BROKERS'];
  if (raw === undefined || raw === '') return 1;
  const count = Number(raw);
  if (!Number.isInteger(count) || count < 1 || count > maxKafkaBrokers) {
    const source = option === undefined ? 'STACK_KAFKA_BROKERS' : '--kafka-brokers';
    throw new InfraError(
      'INVALID_OPTION',
      `${source} must be a whole number from 1 to ${maxKafkaBrokers} (got "${String(raw)}")`,
      { hint: 'one broker for development, three for a production-shaped cluster' },
    );
  }
  return count;
}
