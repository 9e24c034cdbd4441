import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';

/** A transaction's statements were due by a time that has passed: it was rolled back. */
export class SendDeadlinePassed extends Error {
  constructor(lateByMs: number) {
    super(`the transaction's next statement was due ${Math.round(lateByMs)} ms ago`);
    this.name = 'SendDeadlinePassed';
  }
}

/**
 * Lets a transaction send statements only until `sendBy` (`performance.now()`): a statement due
 * later throws {@link SendDeadlinePassed} instead of being sent, so the transaction rolls back.
 * Work that would commit too late to be answered in time is given up while it can still be,
 * before its COMMIT; call {@link SendDeadline.check} before that, which no plugin sees.
 */
export class SendDeadline implements KyselyPlugin {
  readonly #sendBy: number;

  constructor(sendBy: number) {
    this.#sendBy = sendBy;
  }

  check(): void {
    const lateByMs = performance.now() - this.#sendBy;
    if (lateByMs > 0) throw new SendDeadlinePassed(lateByMs);
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.check();
    return args.node;
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}
