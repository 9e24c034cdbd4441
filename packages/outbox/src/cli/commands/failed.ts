import {
  listFailedOutboxEvents,
  retryFailedOutboxEvents,
  skipFailedOutboxEvents,
} from '../../ops/failed-events.ts';
import { rowTriageCommands } from './row-triage.ts';

/** FAILED outbox rows: `failed list`, `failed retry`, `failed skip --yes`. */
export const failedCommands = rowTriageCommands({
  name: 'failed',
  filter: { option: 'topic', placeholder: 'TOPIC' },
  list: (db, topic, limit) =>
    listFailedOutboxEvents(db, { ...(topic === undefined ? {} : { topic }), limit }),
  columns: [
    'eventId',
    'topic',
    'partitionKey',
    'attempts',
    'waitingBehind',
    'failedAt',
    'lastError',
  ],
  none: 'no FAILED outbox rows',
  notInState: 'no FAILED outbox row has that event id',
  retry: { verb: 'retry', done: 'retried', run: retryFailedOutboxEvents },
  drop: { verb: 'skip', done: 'skipped', run: skipFailedOutboxEvents },
});
