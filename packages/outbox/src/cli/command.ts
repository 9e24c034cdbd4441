import type { EventProducer } from '../kafka-port/kafka-client.ts';
import type { Kysely } from 'kysely';
import type { OutboxTables } from '../schema/tables.ts';
import { UsageError, type OptionKind, type ParsedArgs } from './args.ts';
import type { CliIo } from './output.ts';

/** What a subcommand works with; each piece is opened on first use and closed by the CLI. */
export interface CliContext {
  readonly io: CliIo;
  /** The database of DATABASE_URL. */
  db(): Kysely<OutboxTables>;
  /** A connected producer for KAFKA_BROKERS (only `parked requeue` needs Kafka). */
  producer(): Promise<EventProducer>;
  /** Kafka Connect's REST API, CONNECT_URL (only `cdc remove` needs it). */
  connectUrl(): string;
}

/** One subcommand: `status`, `dead list`, ... */
export interface Subcommand {
  /** The line shown in the usage, after `outbox `. */
  readonly usage: string;
  readonly options: Readonly<Record<string, OptionKind>>;
  /** Deletes or gives up on something: refused without `--yes`. */
  readonly destructive?: boolean;
  /** Runs and returns the exit code. */
  run(context: CliContext, args: ParsedArgs): Promise<number>;
}

/** Exit codes: documented in the usage and the runbook. */
export const EXIT = Object.freeze({
  ok: 0,
  /** A failure (database, Kafka), or not every row named was in the state the command needs. */
  failed: 1,
  usage: 2,
});

/** `acted` of `requested` named rows: a message, and exit 1 when some were not acted on. */
export function reportActed(
  context: CliContext,
  args: ParsedArgs,
  result: {
    readonly verb: string;
    readonly acted: number;
    readonly requested: number;
    readonly notes: string;
  },
): number {
  const { verb, acted, requested } = result;
  if (args.flags.has('json')) context.io.out(JSON.stringify({ [verb]: acted, requested }));
  else context.io.out(`${verb} ${acted} of ${requested}`);
  if (acted < requested) {
    context.io.err(`${requested - acted} not ${verb}: ${result.notes}`);
    return EXIT.failed;
  }
  return EXIT.ok;
}

/** No positionals for a command that takes none. */
export function noPositionals(args: ParsedArgs): void {
  if (args.positionals.length > 0) {
    throw new UsageError(`unexpected argument "${args.positionals[0]}"`);
  }
}
