import { replayOutbox, type ReplaySelection } from '../../ops/replay.ts';
import { UsageError } from '../args.ts';
import { noPositionals, EXIT, type Subcommand } from '../command.ts';

export const replay: Subcommand = {
  usage: 'replay [--from-id N] [--to-id N] [--since ISO] [--until ISO] [--topic NAME] [--json]',
  options: {
    'from-id': 'string',
    'to-id': 'string',
    since: 'string',
    until: 'string',
    topic: 'string',
    json: 'boolean',
  },
  async run(context, args) {
    noPositionals(args);
    const selection = parseReplaySelection((name) => args.strings.get(name));
    const queued = await replayOutbox(context.db(), selection);
    if (args.flags.has('json')) context.io.out(JSON.stringify({ queued }));
    else context.io.out(`queued ${queued} outbox event(s) for republishing`);
    return EXIT.ok;
  },
};

/** The rows to replay, from the options' values; a UsageError names what is wrong. */
export function parseReplaySelection(get: (name: string) => string | undefined): ReplaySelection {
  const id = (name: string): string | undefined => {
    const value = get(name);
    if (value !== undefined && !/^\d+$/.test(value))
      throw new UsageError(`--${name} must be an integer (got "${value}")`);
    return value;
  };
  const date = (name: string): Date | undefined => {
    const value = get(name);
    if (value === undefined) return undefined;
    const parsed = new Date(value);
    if (Number.isNaN(parsed.getTime()))
      throw new UsageError(`--${name} must be an ISO date (got "${value}")`);
    return parsed;
  };
  const selection = {
    fromId: id('from-id'),
    toId: id('to-id'),
    since: date('since'),
    until: date('until'),
    topic: get('topic'),
  };
  if (Object.values(selection).every((value) => value === undefined)) {
    // Replaying the whole table is rarely meant; make it explicit.
    throw new UsageError('give at least one of --from-id, --to-id, --since, --until, --topic');
  }
  return Object.fromEntries(Object.entries(selection).filter(([, v]) => v !== undefined));
}
