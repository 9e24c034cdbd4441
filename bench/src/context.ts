import type { Stack } from '@outbox-inbox/infra';
import type { Kafka } from 'kafkajs';
import type { BenchSettings } from './settings.ts';

/** What every scenario gets: the stack it runs on, a Kafka client, the sizes, a progress log. */
export interface BenchContext {
  readonly stack: Stack;
  readonly kafka: Kafka;
  readonly settings: BenchSettings;
  log(message: string): void;
}
