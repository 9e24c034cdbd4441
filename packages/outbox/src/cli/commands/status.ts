import { readOutboxStatus } from '../../ops/status.ts';
import { noPositionals, EXIT, type Subcommand } from '../command.ts';
import { printRows } from '../output.ts';

export const status: Subcommand = {
  usage: 'status [--json]',
  options: { json: 'boolean' },
  async run(context, args) {
    noPositionals(args);
    const rows = await readOutboxStatus(context.db());
    printRows(
      context.io,
      args.flags.has('json'),
      rows,
      ['table', 'backlog', 'oldestAgeSeconds', 'stuck', 'retained'],
      'no tables',
    );
    return EXIT.ok;
  },
};
