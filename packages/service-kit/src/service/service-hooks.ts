import type {
  DedupConsumerHooks,
  InboxProcessorHooks,
  InboxWriterHooks,
  RelayHooks,
} from '@outbox-inbox/outbox/testing';

/** A response the api role is about to send: its handler (and any transaction) is done. */
export interface ReplyInfo {
  readonly method: string;
  /** The route as declared (`/orders/:id/cancel`), not the request's path. */
  readonly route: string;
  readonly statusCode: number;
}

/** Moments of the api role's request a caller can act at. */
export interface HttpHooks {
  /** The handler finished (its transaction committed) and no byte of the answer has left. */
  readonly beforeReply?: (reply: ReplyInfo) => void | Promise<void>;
}

/**
 * Library hooks a caller hands to a service's workers, by worker. A deployment passes none; a
 * test harness fills them in to act at an exact moment of a worker's unit of work (the e2e
 * suite kills a relay after Kafka acknowledged a batch and before it is marked published, a
 * consumer after storing a batch and before committing its offset, the api after a commit and
 * before the answer, and makes an inbox handler hang).
 */
export interface ServiceHooks {
  readonly relay?: RelayHooks;
  readonly inboxWriter?: InboxWriterHooks;
  readonly inboxProcessor?: InboxProcessorHooks;
  readonly dedupConsumer?: DedupConsumerHooks;
  readonly http?: HttpHooks;
}
