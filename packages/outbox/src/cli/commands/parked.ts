import { discardParkedMessages, requeueParkedMessages } from '../../receive/parked-operations.ts';
import { readParkedMessages, type ParkedMessage } from '../../receive/read-parked-messages.ts';
import { rowIds, UsageError, wholeNumber } from '../args.ts';
import { noPositionals, reportActed, EXIT, type CliContext, type Subcommand } from '../command.ts';
import { printRows } from '../output.ts';

const NOT_PARKED = 'no parked message has that id';

/** Bytes as text when they are UTF-8 without control characters, base64 otherwise. */
function describeBytes(bytes: Buffer | null): { text: string } | { base64: string } | null {
  if (bytes === null) return null;
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  const control = [...text].some((char) => char < ' ' && !'\t\n\r'.includes(char));
  const printable = Buffer.from(text, 'utf8').equals(bytes) && !control;
  return printable ? { text } : { base64: bytes.toString('base64') };
}

function shown(message: ParkedMessage): Record<string, unknown> {
  return {
    id: message.id,
    consumer: message.consumer,
    topic: message.topic,
    partition: message.partition,
    offset: message.offset,
    reason: message.reason,
    parkedAt: message.parkedAt,
    key: describeBytes(message.key),
    value: describeBytes(message.value),
    headers: message.headers.map((header) => ({
      name: header.name,
      value: describeBytes(header.value),
    })),
  };
}

/** `name: value`, with structured values (key, value, headers) as JSON on the line. */
function detailLine(name: string, value: unknown): string {
  if (value instanceof Date) return `${name}: ${value.toISOString()}`;
  return `${name}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`;
}

export const parkedList: Subcommand = {
  usage: 'parked list [--consumer NAME] [--after-id ID] [--limit N] [--json]',
  options: { consumer: 'string', 'after-id': 'string', limit: 'string', json: 'boolean' },
  async run(context, args) {
    noPositionals(args);
    const consumer = args.strings.get('consumer');
    const afterId = args.strings.get('after-id');
    if (afterId !== undefined) rowIds([afterId]);
    const messages = await readParkedMessages(context.db(), {
      ...(consumer === undefined ? {} : { consumer }),
      ...(afterId === undefined ? {} : { afterId }),
      limit: wholeNumber('limit', args.strings.get('limit')) ?? 100,
    });
    const rows = messages.map((message) => ({
      id: message.id,
      consumer: message.consumer,
      topic: message.topic,
      partition: message.partition,
      offset: message.offset,
      bytes: message.value?.length ?? 0,
      parkedAt: message.parkedAt,
      reason: message.reason,
    }));
    printRows(
      context.io,
      args.flags.has('json'),
      rows,
      ['id', 'consumer', 'topic', 'partition', 'offset', 'bytes', 'parkedAt', 'reason'],
      'no parked messages',
    );
    return EXIT.ok;
  },
};

export const parkedShow: Subcommand = {
  usage: 'parked show ID [--json]',
  options: { json: 'boolean' },
  async run(context, args) {
    const ids = rowIds(args.positionals);
    if (ids.length > 1) throw new UsageError('parked show takes one id');
    const [message] = await readParkedMessages(context.db(), { ids });
    if (message === undefined) {
      context.io.err(`no parked message ${ids[0]}`);
      return EXIT.failed;
    }
    const details = shown(message);
    if (args.flags.has('json')) context.io.out(JSON.stringify(details, null, 2));
    else
      for (const [name, value] of Object.entries(details)) context.io.out(detailLine(name, value));
    return EXIT.ok;
  },
};

/** What `parked requeue` and `parked discard` differ in. */
interface ParkedAction {
  readonly usage: string;
  /** Refused without `--yes`. */
  readonly destructive: boolean;
  /** As reported: `requeued 2 of 3`. */
  readonly done: string;
  /** Acts on the named messages; returns how many it acted on. */
  act(context: CliContext, ids: readonly string[]): Promise<number>;
}

/** `parked <verb> ID...`: acts on the parked messages named by id and reports how many. */
function parkedCommand(action: ParkedAction): Subcommand {
  const { destructive } = action;
  return {
    usage: action.usage,
    options: destructive ? { yes: 'boolean', json: 'boolean' } : { json: 'boolean' },
    destructive,
    async run(context, args) {
      const ids = rowIds(args.positionals);
      const acted = await action.act(context, ids);
      return reportActed(context, args, {
        verb: action.done,
        acted,
        requested: ids.length,
        notes: NOT_PARKED,
      });
    },
  };
}

export const parkedRequeue = parkedCommand({
  usage: 'parked requeue ID... [--json]   (needs KAFKA_BROKERS)',
  destructive: false,
  done: 'requeued',
  act: async (context, ids) =>
    (await requeueParkedMessages(context.db(), await context.producer(), ids)).length,
});

export const parkedDiscard = parkedCommand({
  usage: 'parked discard ID... --yes [--json]',
  destructive: true,
  done: 'discarded',
  act: (context, ids) => discardParkedMessages(context.db(), ids),
});
