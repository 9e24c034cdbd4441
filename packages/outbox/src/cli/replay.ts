#!/usr/bin/env node
// Replay CLI: queue published outbox rows again so the relay republishes them.
//   DATABASE_URL=postgres://... node src/cli/replay.ts [--from-id N] [--to-id N]
//     [--since ISO] [--until ISO] [--topic NAME]
import { parseArgs } from 'node:util';
import { Kysely, PostgresDialect } from 'kysely';
import { silentLogger } from '../logger.ts';
import { replayOutbox, type ReplaySelection } from '../operations/replay.ts';
import { createPgPool } from '../pg-pool.ts';
import type { OutboxTables } from '../schema/tables.ts';

const USAGE =
  'usage: DATABASE_URL=postgres://... replay [--from-id N] [--to-id N] [--since ISO] [--until ISO] [--topic NAME]';

export function parseReplayArgs(args: readonly string[]): ReplaySelection {
  const { values } = parseArgs({
    args: [...args],
    options: {
      'from-id': { type: 'string' },
      'to-id': { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      topic: { type: 'string' },
    },
    strict: true,
  });
  const id = (name: string, value: string | undefined): string | undefined => {
    if (value !== undefined && !/^\d+$/.test(value))
      throw new Error(`--${name} must be an integer`);
    return value;
  };
  const date = (name: string, value: string | undefined): Date | undefined => {
    if (value === undefined) return undefined;
    const parsed = new Date(value);
    if (Number.isNaN(parsed.getTime())) throw new Error(`--${name} must be an ISO date`);
    return parsed;
  };
  const selection = {
    fromId: id('from-id', values['from-id']),
    toId: id('to-id', values['to-id']),
    since: date('since', values.since),
    until: date('until', values.until),
    topic: values.topic,
  };
  if (Object.values(selection).every((value) => value === undefined)) {
    // Replaying the whole table is rarely meant; make it explicit.
    throw new Error('give at least one of --from-id, --to-id, --since, --until, --topic');
  }
  return Object.fromEntries(Object.entries(selection).filter(([, v]) => v !== undefined));
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
  const db = new Kysely<OutboxTables>({
    dialect: new PostgresDialect({
      pool: createPgPool({ connectionString: url, max: 1 }, silentLogger),
    }),
  });
  try {
    const queued = await replayOutbox(db, selection);
    console.log(`queued ${queued} outbox event(s) for republishing`);
    return 0;
  } finally {
    await db.destroy();
  }
}

if (import.meta.main) process.exitCode = await main();
