import {
  listFailedOutboxEvents,
  retryFailedOutboxEvents,
  skipFailedOutboxEvents,
} from '../../operations/failed-events.ts';
import { eventIds, wholeNumber } from '../args.ts';
import { noPositionals, reportActed, EXIT, type Subcommand } from '../command.ts';
import { printRows } from '../output.ts';

const NOT_FAILED = 'no FAILED outbox row has that event id';

export const failedList: Subcommand = {
  usage: 'failed list [--topic TOPIC] [--limit N] [--json]',
  options: { topic: 'string', limit: 'string', json: 'boolean' },
  async run(context, args) {
    noPositionals(args);
    const topic = args.strings.get('topic');
    const rows = await listFailedOutboxEvents(context.db(), {
      ...(topic === undefined ? {} : { topic }),
      limit: wholeNumber('limit', args.strings.get('limit')) ?? 100,
    });
    printRows(
      context.io,
      args.flags.has('json'),
      rows,
      ['eventId', 'topic', 'partitionKey', 'attempts', 'waitingBehind', 'failedAt', 'lastError'],
      'no FAILED outbox rows',
    );
    return EXIT.ok;
  },
};

export const failedRetry: Subcommand = {
  usage: 'failed retry EVENT_ID... [--json]',
  options: { json: 'boolean' },
  async run(context, args) {
    const ids = eventIds(args.positionals);
    const acted = await retryFailedOutboxEvents(context.db(), ids);
    return reportActed(context, args, {
      verb: 'retried',
      acted,
      requested: ids.length,
      notes: NOT_FAILED,
    });
  },
};

export const failedSkip: Subcommand = {
  usage: 'failed skip EVENT_ID... --yes [--json]',
  options: { yes: 'boolean', json: 'boolean' },
  destructive: true,
  async run(context, args) {
    const ids = eventIds(args.positionals);
    const acted = await skipFailedOutboxEvents(context.db(), ids);
    return reportActed(context, args, {
      verb: 'skipped',
      acted,
      requested: ids.length,
      notes: NOT_FAILED,
    });
  },
};
