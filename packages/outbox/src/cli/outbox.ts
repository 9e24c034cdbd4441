#!/usr/bin/env node
// The operator's command line: `outbox <command>` against a service's DATABASE_URL.
import { parseArgs, UsageError } from './args.ts';
import { EXIT, type Subcommand } from './command.ts';
import { cdcRemove } from './commands/cdc.ts';
import { deadCommands } from './commands/dead.ts';
import { failedCommands } from './commands/failed.ts';
import { parkedDiscard, parkedList, parkedRequeue, parkedShow } from './commands/parked.ts';
import { replay } from './commands/replay.ts';
import { retention } from './commands/retention.ts';
import { status } from './commands/status.ts';
import { createCliContext } from './context.ts';
import type { CliIo } from './output.ts';

/** Every subcommand by its words, in the order the usage lists them. */
const subcommands: ReadonlyMap<string, Subcommand> = new Map<string, Subcommand>([
  ['status', status],
  ['replay', replay],
  ['retention', retention],
  ...failedCommands,
  ...deadCommands,
  ['parked list', parkedList],
  ['parked show', parkedShow],
  ['parked requeue', parkedRequeue],
  ['parked discard', parkedDiscard],
  ['cdc remove', cdcRemove],
]);

export const USAGE = [
  'usage: DATABASE_URL=postgres://... outbox <command>',
  '',
  ...[...subcommands.values()].map((command) => `  outbox ${command.usage}`),
  '',
  'Tables are printed for people; --json prints JSON for scripts. Commands that delete or',
  'give up on rows need --yes. A value may start with "-" (--topic -x); "--" ends the options.',
  'Exit codes: 0 done; 1 failed, or not every row named was in the state the command needs;',
  '2 bad command line or a variable not set.',
].join('\n');

interface Found {
  readonly name: string;
  readonly command: Subcommand;
  readonly rest: readonly string[];
}

function findSubcommand(argv: readonly string[]): Found {
  const [first = '', second = ''] = argv;
  for (const [name, rest] of [
    [`${first} ${second}`, argv.slice(2)],
    [first, argv.slice(1)],
  ] as const) {
    const command = subcommands.get(name);
    if (command !== undefined) return { name, command, rest };
  }
  if ([...subcommands.keys()].some((name) => name.startsWith(`${first} `))) {
    throw new UsageError(
      `outbox ${first} needs one of: ${[...subcommands.keys()]
        .filter((name) => name.startsWith(`${first} `))
        .map((name) => name.slice(first.length + 1))
        .join(', ')}`,
    );
  }
  throw new UsageError(first === '' ? 'name a command' : `unknown command "${first}"`);
}

/** Runs one command line; returns the exit code. Errors go to `io.err`, never thrown. */
export async function runOutboxCli(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: CliIo,
): Promise<number> {
  if (argv[0] === 'help' || argv[0] === '--help' || argv[0] === '-h') {
    io.out(USAGE);
    return EXIT.ok;
  }
  const context = createCliContext(env, io);
  let found: Found | undefined;
  try {
    found = findSubcommand(argv);
    const args = parseArgs(found.rest, found.command.options);
    if (found.command.destructive === true && !args.flags.has('yes')) {
      throw new UsageError(`outbox ${found.name} changes rows for good: add --yes`);
    }
    return await found.command.run(context, args);
  } catch (error) {
    if (error instanceof UsageError) {
      // Within a known command its own line is the help; otherwise the whole list.
      const usage = found === undefined ? USAGE : `usage: outbox ${found.command.usage}`;
      io.err(`error: ${error.message}\n${usage}`);
      return EXIT.usage;
    }
    io.err(`error: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT.failed;
  } finally {
    await context.close().catch(() => undefined);
  }
}

if (import.meta.main) {
  process.exitCode = await runOutboxCli(process.argv.slice(2), process.env, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  });
}
