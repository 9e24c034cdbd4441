import {
  discardDeadInboxEvents,
  listDeadInboxEvents,
  requeueDeadInboxEvents,
} from '../../inbox/dead-rows.ts';
import { eventIds, wholeNumber } from '../args.ts';
import { noPositionals, reportActed, EXIT, type Subcommand } from '../command.ts';
import { printRows } from '../output.ts';

const NOT_DEAD = 'no dead inbox row has that event id';

export const deadList: Subcommand = {
  usage: 'dead list [--consumer-group GROUP] [--limit N] [--json]',
  options: { 'consumer-group': 'string', limit: 'string', json: 'boolean' },
  async run(context, args) {
    noPositionals(args);
    const group = args.strings.get('consumer-group');
    const rows = await listDeadInboxEvents(context.db(), {
      ...(group === undefined ? {} : { consumerGroup: group }),
      limit: wholeNumber('limit', args.strings.get('limit')) ?? 100,
    });
    printRows(
      context.io,
      args.flags.has('json'),
      rows,
      ['eventId', 'consumerGroup', 'eventType', 'partitionKey', 'attempts', 'deadAt', 'lastError'],
      'no dead inbox rows',
    );
    return EXIT.ok;
  },
};

export const deadRequeue: Subcommand = {
  usage: 'dead requeue EVENT_ID... [--json]',
  options: { json: 'boolean' },
  async run(context, args) {
    const ids = eventIds(args.positionals);
    const acted = await requeueDeadInboxEvents(context.db(), ids);
    return reportActed(context, args, {
      verb: 'requeued',
      acted,
      requested: ids.length,
      notes: NOT_DEAD,
    });
  },
};

export const deadDiscard: Subcommand = {
  usage: 'dead discard EVENT_ID... --yes [--json]',
  options: { yes: 'boolean', json: 'boolean' },
  destructive: true,
  async run(context, args) {
    const ids = eventIds(args.positionals);
    const acted = await discardDeadInboxEvents(context.db(), ids);
    return reportActed(context, args, {
      verb: 'discarded',
      acted,
      requested: ids.length,
      notes: NOT_DEAD,
    });
  },
};
