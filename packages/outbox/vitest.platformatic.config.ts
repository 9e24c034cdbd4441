import { configDefaults, defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * The second pass, on the port's @platformatic/kafka adapter: every test file that drives a
 * Kafka client through the port (relay, inbox writer, dedup consumer, the consumer's hooks)
 * runs again on it. The inbox processor's files and the claim plan's touch no Kafka client:
 * the first pass proves them for both.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'test/relay/**/*.test.ts',
      'test/inbox-writer/inbox-writer*.test.ts',
      'test/inbox-writer/postgres-restart.test.ts',
      'test/dedup-consumer/**/*.test.ts',
      'test/receive/consumer-hooks.test.ts',
      'test/receive/consumer-failover.test.ts',
      'test/receive/heartbeat-during-batch.test.ts',
    ],
    exclude: [...configDefaults.exclude, 'test/relay/claim-plan.test.ts'],
    env: { ...base.test?.env, KAFKA_CLIENT: 'platformatic' },
  },
});
