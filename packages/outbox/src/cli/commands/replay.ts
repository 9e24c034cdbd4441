import { replayOutbox } from '../../operations/replay.ts';
import { noPositionals, EXIT, type Subcommand } from '../command.ts';
import { parseReplaySelection } from '../replay.ts';

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
