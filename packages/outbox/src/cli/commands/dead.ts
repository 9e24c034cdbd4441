import {
  discardDeadInboxEvents,
  listDeadInboxEvents,
  requeueDeadInboxEvents,
} from '../../inbox-processor/dead-rows.ts';
import { rowTriageCommands } from './row-triage.ts';

/** Dead inbox rows: `dead list`, `dead requeue`, `dead discard --yes`. */
export const deadCommands = rowTriageCommands({
  name: 'dead',
  filter: { option: 'consumer-group', placeholder: 'GROUP' },
  list: (db, consumerGroup, limit) =>
    listDeadInboxEvents(db, { ...(consumerGroup === undefined ? {} : { consumerGroup }), limit }),
  columns: [
    'eventId',
    'consumerGroup',
    'eventType',
    'partitionKey',
    'attempts',
    'deadAt',
    'lastError',
  ],
  none: 'no dead inbox rows',
  notInState: 'no dead inbox row has that event id',
  retry: { verb: 'requeue', done: 'requeued', run: requeueDeadInboxEvents },
  drop: { verb: 'discard', done: 'discarded', run: discardDeadInboxEvents },
});
