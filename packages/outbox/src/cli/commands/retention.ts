import {
  previewRetention,
  type RetentionOptions,
  type RetentionTable,
} from '../../ops/retention.ts';
import { runRetentionExclusively } from '../../ops/retention-lock.ts';
import { duration, UsageError, wholeNumber, type ParsedArgs } from '../args.ts';
import { noPositionals, EXIT, type Subcommand } from '../command.ts';
import { printRows } from '../output.ts';

/** `--table idempotency_key:created_at:1d`: a service table, its date column and its window. */
function serviceTable(value: string): RetentionTable {
  const [table, column, window, ...rest] = value.split(':');
  if (!table || !column || !window || rest.length > 0) {
    throw new UsageError(
      `--table must be TABLE:COLUMN:WINDOW, e.g. idempotency_key:created_at:1d (got "${value}")`,
    );
  }
  return { table, column, olderThan: duration('table', window) ?? 0 };
}

function retentionOptions(args: ParsedArgs): RetentionOptions {
  const olderThan = duration('outbox-window', args.strings.get('outbox-window'));
  if (olderThan === undefined) {
    throw new UsageError('--outbox-window is required: how long published outbox rows stay');
  }
  const optional = {
    processedEventsOlderThan: duration(
      'processed-event-window',
      args.strings.get('processed-event-window'),
    ),
    inboxOlderThan: duration('inbox-window', args.strings.get('inbox-window')),
    parkedOlderThan: duration('parked-window', args.strings.get('parked-window')),
    batchSize: wholeNumber('batch-size', args.strings.get('batch-size')),
  };
  return {
    olderThan,
    ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)),
    tables: (args.lists.get('table') ?? []).map(serviceTable),
  };
}

export const retention: Subcommand = {
  usage:
    'retention (--dry-run | --yes) --outbox-window D [--inbox-window D] [--processed-event-window D] ' +
    '[--parked-window D] [--table TABLE:COLUMN:D]... [--batch-size N] [--json]   (D: 90s, 15m, 12h, 7d)',
  options: {
    'dry-run': 'boolean',
    yes: 'boolean',
    'outbox-window': 'string',
    'inbox-window': 'string',
    'processed-event-window': 'string',
    'parked-window': 'string',
    table: 'strings',
    'batch-size': 'string',
    json: 'boolean',
  },
  async run(context, args) {
    noPositionals(args);
    const dryRun = args.flags.has('dry-run');
    if (!dryRun && !args.flags.has('yes')) {
      throw new UsageError('retention deletes rows: add --yes, or --dry-run to see what would go');
    }
    const options = retentionOptions(args);
    const result = dryRun
      ? await previewRetention(context.db(), options)
      : await runRetentionExclusively(context.db(), options);
    if (result === undefined) {
      context.io.err('another retention run holds the lock (a retention role?); nothing deleted');
      return EXIT.failed;
    }
    const rows = Object.entries(result.byTable).map(([table, rowCount]) => ({
      table,
      [dryRun ? 'wouldDelete' : 'deleted']: rowCount,
    }));
    printRows(
      context.io,
      args.flags.has('json'),
      rows,
      ['table', dryRun ? 'wouldDelete' : 'deleted'],
      'no tables',
    );
    return EXIT.ok;
  },
};
