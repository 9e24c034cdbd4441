#!/usr/bin/env node
// Replay CLI, kept for scripts written before `outbox replay` (which takes the same options):
//   DATABASE_URL=postgres://... node src/cli/replay.ts [--from-id N] [--to-id N]
//     [--since ISO] [--until ISO] [--topic NAME]
import { OutboxError } from '../errors.ts';
import { replayOutbox, type ReplaySelection } from '../operations/replay.ts';
import { parseArgs, UsageError } from './args.ts';
import { openDatabase } from './context.ts';

const USAGE =
  'usage: DATABASE_URL=postgres://... replay [--from-id N] [--to-id N] [--since ISO] [--until ISO] [--topic NAME]';

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

export function parseReplayArgs(args: readonly string[]): ReplaySelection {
  const parsed = parseArgs(args, {
    'from-id': 'string',
    'to-id': 'string',
    since: 'string',
    until: 'string',
    topic: 'string',
  });
  if (parsed.positionals.length > 0) {
    throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
  }
  return parseReplaySelection((name) => parsed.strings.get(name));
}

async function main(): Promise<number> {
  const url = process.env['DATABASE_URL'];
  if (!url) {
    console.error(`DATABASE_URL is not set\n${USAGE}`);
    return 2;
  }
  let selection: ReplaySelection;
  try {
    selection = parseReplayArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    return 2;
  }
  const db = openDatabase(url);
  try {
    const queued = await replayOutbox(db, selection);
    console.log(`queued ${queued} outbox event(s) for republishing`);
    return 0;
  } catch (error) {
    if (!(error instanceof OutboxError)) throw error;
    console.error(`error: ${error.message}`);
    return 1;
  } finally {
    await db.destroy();
  }
}

if (import.meta.main) process.exitCode = await main();
