import type { PluginTransformQueryArgs, RootOperationNode } from 'kysely';
import { OutboxError } from '../errors.ts';
import { PassThroughPlugin } from '../internal/pass-through-plugin.ts';

/**
 * Closes a handler's transaction to the handler once its attempt is over. A handler that timed
 * out keeps running (a promise cannot be cancelled); without the guard, a query it sends while
 * the transaction rolls back would run on the connection after the ROLLBACK, outside any
 * transaction, and its write would commit on its own.
 */
export class AttemptGuard extends PassThroughPlugin {
  #open = true;

  close(): void {
    this.#open = false;
  }

  override transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (!this.#open) {
      throw new OutboxError(
        'HANDLER_TIMEOUT',
        'this inbox handler attempt is over (timed out); its transaction is closed',
      );
    }
    return super.transformQuery(args);
  }
}
