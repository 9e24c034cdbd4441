import pg from 'pg';
import type { StatementNames } from './statement-names.ts';

/**
 * PostgreSQL's answers after which a prepared statement cannot run again on its connection:
 * "cached plan must not change result type" (a migration changed the columns a `SELECT *`
 * returns) and "prepared statement does not exist".
 */
const STALE_STATEMENT_CODES = new Set(['0A000', '26000']);

/**
 * A text without parameters that is one query (WITH or SELECT, no `;`): prepared like the
 * others, its one plan is then kept for all its executions (a relay's heads claim carries its
 * sizes as literals for that). BEGIN, COMMIT and query strings of several statements keep the
 * simple protocol.
 */
function isOneQuery(text: string): boolean {
  return /^\s*(WITH|SELECT)\b/i.test(text) && !text.includes(';');
}

type QueryMethod = (this: pg.Client, ...args: unknown[]) => unknown;
// pg types `query` as a dozen overloads; the wrapper passes every call shape through unchanged.
const sendQuery = pg.Client.prototype.query as unknown as QueryMethod;

/**
 * A `pg.Client` that sends the statements a process keeps repeating as named prepared
 * statements. kysely sends each parameterised query unnamed, so PostgreSQL parses, analyses and
 * plans it on every execution; a named one is parsed once per connection, and after five
 * executions the planner may keep a generic plan and stop planning it at all. BEGIN, COMMIT
 * and other texts that are not one query keep the simple protocol they already use.
 */
export function statementPreparingClient(names: StatementNames): typeof pg.Client {
  const preparingQuery: QueryMethod = function (this: pg.Client, ...args) {
    const [text, values] = args;
    if (args.length !== 2 || typeof text !== 'string' || !Array.isArray(values)) {
      return sendQuery.apply(this, args);
    }
    const name = values.length > 0 || isOneQuery(text) ? names.nameFor(text) : undefined;
    if (name === undefined) return sendQuery.call(this, text, values);
    const sent = sendQuery.call(this, { name, text, values }) as Promise<unknown>;
    return sent.catch((error: unknown) => {
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code === 'string' && STALE_STATEMENT_CODES.has(code)) names.retire(text, name);
      throw error;
    });
  };
  class StatementPreparingClient extends pg.Client {}
  Object.defineProperty(StatementPreparingClient.prototype, 'query', {
    value: preparingQuery,
    writable: true,
    configurable: true,
  });
  return StatementPreparingClient;
}
