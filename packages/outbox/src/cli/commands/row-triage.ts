import type { Kysely } from 'kysely';
import type { OutboxTables } from '../../schema/tables.ts';
import { eventIds, wholeNumber } from '../args.ts';
import { noPositionals, reportActed, EXIT, type Subcommand } from '../command.ts';
import { printRows } from '../output.ts';

/** One action on rows named by event id: what it prints it did, and what does it. */
interface RowAction {
  /** As typed: `requeue`. */
  readonly verb: string;
  /** As reported: `requeued 2 of 3`. */
  readonly done: string;
  run(db: Kysely<OutboxTables>, ids: readonly string[]): Promise<number>;
}

/**
 * Rows stuck in a state an operator resolves by hand (dead inbox rows, FAILED outbox rows):
 * how to list them, put them back to work, or give up on them.
 */
export interface RowTriage<Row extends object> {
  /** The command: `dead`, `failed`. */
  readonly name: string;
  /** The one filter of the list: its option (`topic`) and the value's placeholder (`TOPIC`). */
  readonly filter: { readonly option: string; readonly placeholder: string };
  list(db: Kysely<OutboxTables>, filter: string | undefined, limit: number): Promise<Row[]>;
  readonly columns: readonly (keyof Row & string)[];
  /** Printed when the list is empty. */
  readonly none: string;
  /** Why a named row was not acted on. */
  readonly notInState: string;
  /** Puts the rows back to work. */
  readonly retry: RowAction;
  /** Gives up on the rows for good: refused without `--yes`. */
  readonly drop: RowAction;
}

/** `<name> list`, `<name> <retry>` and `<name> <drop> --yes`, as one family of commands. */
export function rowTriageCommands<Row extends object>(
  triage: RowTriage<Row>,
): readonly (readonly [string, Subcommand])[] {
  const { name, filter } = triage;
  const list: Subcommand = {
    usage: `${name} list [--${filter.option} ${filter.placeholder}] [--limit N] [--json]`,
    options: { [filter.option]: 'string', limit: 'string', json: 'boolean' },
    async run(context, args) {
      noPositionals(args);
      const limit = wholeNumber('limit', args.strings.get('limit')) ?? 100;
      const rows = await triage.list(context.db(), args.strings.get(filter.option), limit);
      printRows(context.io, args.flags.has('json'), rows, triage.columns, triage.none);
      return EXIT.ok;
    },
  };
  const act = (action: RowAction, destructive: boolean): Subcommand => ({
    usage: `${name} ${action.verb} EVENT_ID...${destructive ? ' --yes' : ''} [--json]`,
    options: destructive ? { yes: 'boolean', json: 'boolean' } : { json: 'boolean' },
    destructive,
    async run(context, args) {
      const ids = eventIds(args.positionals);
      const acted = await action.run(context.db(), ids);
      return reportActed(context, args, {
        verb: action.done,
        acted,
        requested: ids.length,
        notes: triage.notInState,
      });
    },
  });
  return [
    [`${name} list`, list],
    [`${name} ${triage.retry.verb}`, act(triage.retry, false)],
    [`${name} ${triage.drop.verb}`, act(triage.drop, true)],
  ];
}
