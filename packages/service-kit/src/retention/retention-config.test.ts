import { expect, it } from 'vitest';
import { createEnvReader } from '../config/env-reader.ts';
import { readRetentionConfig } from './retention-config.ts';

const DAY_MS = 86_400_000;

it('defaults: a week of outbox, a month of dedup rows and parked messages, a run every 5 min', () => {
  expect(readRetentionConfig(createEnvReader({}))).toEqual({
    intervalMs: 300_000,
    batchSize: 1000,
    outboxWindowMs: 7 * DAY_MS,
    processedEventWindowMs: 30 * DAY_MS,
    inboxWindowMs: 30 * DAY_MS,
    parkedWindowMs: 30 * DAY_MS,
  });
});

it('the inbox window follows the processed_event one unless set, and is never shorter', () => {
  const read = (env: Record<string, string>) => readRetentionConfig(createEnvReader(env));
  expect(read({ RETENTION_PROCESSED_EVENT_WINDOW_SECONDS: '60' }).inboxWindowMs).toBe(60_000);
  expect(
    read({ RETENTION_PROCESSED_EVENT_WINDOW_SECONDS: '60', RETENTION_INBOX_WINDOW_SECONDS: '61' })
      .inboxWindowMs,
  ).toBe(61_000);
  expect(() =>
    read({ RETENTION_PROCESSED_EVENT_WINDOW_SECONDS: '60', RETENTION_INBOX_WINDOW_SECONDS: '59' }),
  ).toThrow(
    /RETENTION_INBOX_WINDOW_SECONDS must be at least RETENTION_PROCESSED_EVENT_WINDOW_SECONDS \(60\)/,
  );
  expect(() => read({ RETENTION_OUTBOX_WINDOW_SECONDS: '0' })).toThrow(
    'RETENTION_OUTBOX_WINDOW_SECONDS must be an integer from 1',
  );
});
