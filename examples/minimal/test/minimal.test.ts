import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, expect, inject, it } from 'vitest';
import { pollUntil, Stack } from '@outbox-inbox/infra';
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import { silentLogger } from '@outbox-inbox/outbox';
import { replayOutbox } from '@outbox-inbox/outbox/ops';
import { startMinimal, type Minimal } from '../src/minimal.ts';

const stack = () => Stack.open(inject('stackName'));
// Letters, digits and `_` only, whatever the random part draws.
const freshDatabase = () => stack().createDatabase(`minimal_${randomUUID().replaceAll('-', '')}`);

it('runs as a program: signs two users up and exits once both are welcomed', async () => {
  const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
  const env = {
    ...process.env,
    DATABASE_URL: await freshDatabase(),
    KAFKA_BROKERS: stack().kafkaBrokers.join(','),
  };
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [main, 'ada@example.com', 'alan@example.com'],
    { env, timeout: 60_000 },
  );
  expect(stdout).toMatch(/^2 of 2 welcomed in \d+ ms$/m);
});

let service: Minimal | undefined;
afterAll(() => service?.stop());

it('each signup is published and welcomed once, and a replay of every event welcomes nobody twice', async () => {
  const minimal = await startMinimal({
    databaseUrl: await freshDatabase(),
    brokers: stack().kafkaBrokers,
    logger: silentLogger,
  });
  service = minimal;
  const welcomes = async (ids: readonly string[]) => {
    const rows = await minimal.db
      .selectFrom('signups')
      .select('welcomes')
      .where('id', 'in', ids)
      .execute();
    return rows.map((row) => row.welcomes);
  };
  const ids = await Promise.all(
    Array.from({ length: 20 }, (_, i) => minimal.signUp(`user${i}@example.com`)),
  );
  await pollUntil(async () => (await welcomes(ids)).every((n) => n > 0), {
    timeoutMs: 30_000,
    description: 'every signup welcomed',
  });

  // At-least-once delivery: the relay publishes every event again, as after a crash between
  // Kafka's acknowledgement and its mark. The consumer receives each twice, applies it once.
  expect(await replayOutbox(minimal.db, {})).toBe(ids.length);
  await pollUntil(
    async () => {
      const repeats = await minimal.db
        .selectFrom('processed_event')
        .select((eb) => eb.fn.sum<string>('redeliveries').as('n'))
        .where('consumer', '=', 'welcome')
        .executeTakeFirstOrThrow();
      return Number(repeats.n) === ids.length;
    },
    { timeoutMs: 30_000, description: 'every replayed event received again' },
  );
  expect(await welcomes(ids)).toEqual(ids.map(() => 1));
});
