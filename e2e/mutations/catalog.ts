import type { AnchoredEdit } from './anchored-edits.ts';
import { failedBatchMarksAll } from './breaks/failed-batch-marks-all.ts';
import { fetchOutOfKeyOrder } from './breaks/fetch-out-of-key-order.ts';
import { groupCommitAnswersBeforeCommit } from './breaks/group-commit-answers-before-commit.ts';
import { groupWaitUnbounded } from './breaks/group-wait-unbounded.ts';
import { loginsGrantedAll } from './breaks/logins-granted-all.ts';
import { noCommitOrderFence } from './breaks/no-commit-order-fence.ts';
import { noHeadOfKey } from './breaks/no-head-of-key.ts';
import { noIdempotencyKeyCheck } from './breaks/no-idempotency-key-check.ts';
import { noInboxDedup } from './breaks/no-inbox-dedup.ts';
import { noProcessedEventDedup } from './breaks/no-processed-event-dedup.ts';
import { offsetBeforeInboxInsert } from './breaks/offset-before-inbox-insert.ts';
import { publishedBeforeAck } from './breaks/published-before-ack.ts';
import { rejoinWithoutDeadline } from './breaks/rejoin-without-deadline.ts';
import { retentionSessionLock } from './breaks/retention-session-lock.ts';
import { retentionTakesUnfinished } from './breaks/retention-takes-unfinished.ts';
import { streamPositionsBelieved } from './breaks/stream-positions-believed.ts';
import { unboundedAdmissionQueue } from './breaks/unbounded-admission-queue.ts';
import { unboundedAdmissionWait } from './breaks/unbounded-admission-wait.ts';

/** One deliberate break of one guarantee, and the tests that must notice it. */
interface MutationBase {
  readonly name: string;
  /** The guarantee the change breaks, in a sentence. */
  readonly breaks: string;
  /**
   * Test files (relative to the repository root, all in one package) that must fail on the
   * mutated code. The mutation is killed when one of their tests fails as a whole.
   */
  readonly mustFailIn: readonly string[];
  /**
   * What the failure must say: a mutation caught for another reason (a timeout, a crash) is
   * not killed. For a mutation that stands for a documented outcome (the workshop's).
   */
  readonly evidence?: RegExp;
}

/** The change, anchored on the declarations it edits (breaks/<name>.ts). */
interface EditMutation extends MutationBase {
  readonly edits: readonly AnchoredEdit[];
  readonly patch?: undefined;
  readonly excludeFromPatch?: undefined;
}

/**
 * A patch, relative to the repository root: only the workshop's, which learners apply with git
 * and read as a diff (docs/workshop.md), so the mutation proves what they apply.
 */
interface PatchMutation extends MutationBase {
  readonly patch: string;
  /** Files of the patch left out, as `git apply --exclude` takes them: a variant of a patch. */
  readonly excludeFromPatch?: readonly string[];
  readonly edits?: undefined;
}

export type Mutation = EditMutation | PatchMutation;

/**
 * The mutations `pnpm test:mutations` applies, one at a time. Each breaks exactly one
 * guarantee the README promises; the suite is only a proof if it fails for every one of them.
 */
export const mutations: readonly Mutation[] = Object.freeze([
  {
    name: 'no-inbox-dedup',
    breaks: 'the inbox stores a redelivered event again (no key on event_id, no ON CONFLICT)',
    edits: noInboxDedup,
    mustFailIn: ['e2e/test/2-relay-killed.test.ts'],
  },
  {
    name: 'no-processed-event-dedup',
    breaks: 'the dedup consumer applies an event whose processed_event row already exists',
    edits: noProcessedEventDedup,
    mustFailIn: ['e2e/test/3-consumers-killed.test.ts'],
  },
  {
    name: 'fetch-out-of-key-order',
    breaks: "the dedup consumer applies a fetch's events out of their key's order",
    edits: fetchOutOfKeyOrder,
    // Thirty events of three keys on one partition, all in the first fetch: the order each
    // key's events were applied in is compared with their offsets.
    mustFailIn: ['packages/outbox/test/dedup-consumer/dedup-consumer-fetch.test.ts'],
  },
  {
    name: 'no-head-of-key',
    breaks: 'the relay claims any unpublished row, not only the oldest of its partition key',
    edits: noHeadOfKey,
    // This file holds a key's head in one relay's transaction and claims in another: without
    // the rule the second relay takes the key's later rows and then waits on the held head
    // until its lock_timeout, every run. concurrent-relays.test.ts catches it only when
    // relays happen to overlap on a hot key; one fresh-clone run it did not.
    mustFailIn: ['packages/outbox/test/relay/commit-order-fence.test.ts'],
  },
  {
    name: 'no-commit-order-fence',
    breaks:
      'the relay publishes rows of transactions that committed after older ones still running',
    edits: noCommitOrderFence,
    mustFailIn: ['packages/outbox/test/relay/commit-order-fence.test.ts'],
  },
  {
    name: 'published-before-ack',
    breaks: 'the relay commits published_at before Kafka acknowledged the batch',
    edits: publishedBeforeAck,
    // Not scenario 1: a killed broker may have appended the batch in flight before it died,
    // and the relay claims nothing more until Kafka is back, so the mutation can lose nothing
    // there. Here every byte sent while Kafka is silenced is dropped: nothing can be acked.
    mustFailIn: ['packages/outbox/test/relay/unanswered-sends.test.ts'],
  },
  {
    name: 'offset-before-inbox-insert',
    breaks: "the inbox writer commits a batch's offset before its rows are stored",
    edits: offsetBeforeInboxInsert,
    mustFailIn: ['e2e/test/3-consumers-killed.test.ts'],
  },
  {
    name: 'no-idempotency-key-check',
    breaks: 'POST /orders ignores the Idempotency-Key: a retried request creates a second order',
    edits: noIdempotencyKeyCheck,
    mustFailIn: ['e2e/test/14-order-api-killed.test.ts'],
  },
  {
    name: 'group-commit-answers-before-commit',
    breaks: "POST /orders answers a group's requests before the group's transaction committed",
    edits: groupCommitAnswersBeforeCommit,
    // A deferred trigger holds the COMMIT itself there: an answer before it is seen at once.
    mustFailIn: ['services/order-service/test/http/answer-after-commit.test.ts'],
  },
  {
    name: 'workshop-break-idempotency',
    breaks:
      "the workshop's patch: payment-service's inbox key, payment ON CONFLICT and unique order_id, all removed",
    patch: 'docs/workshop/break-idempotency.patch',
    mustFailIn: ['e2e/test/2-relay-killed.test.ts'],
    // docs/workshop.md promises this violation; the docs test leaves the run to this mutation.
    evidence: /order \S+ has [2-9] payments/,
  },
  {
    name: 'workshop-break-idempotency-keep-unique',
    breaks:
      "the workshop's variation: payment-service's inbox key and payment ON CONFLICT removed, the unique order_id kept",
    patch: 'docs/workshop/break-idempotency.patch',
    excludeFromPatch: ['services/payment-service/src/database/migrations.ts'],
    mustFailIn: ['e2e/test/2-relay-killed.test.ts'],
    // The copy's second payment is refused by the constraint until its inbox row goes dead
    // (docs/workshop.md, exercise 3's variation): no double charge, a dead row instead.
    evidence: /dead[\s\S]*(duplicate key|unique)/,
  },
  {
    name: 'failed-batch-marks-all',
    breaks:
      "the inbox processor marks every row of a failed batch processed, the failing row's included, instead of applying each alone",
    edits: failedBatchMarksAll,
    mustFailIn: ['packages/outbox/test/inbox-processor/batch-handler.test.ts'],
  },
  {
    name: 'retention-takes-unfinished',
    breaks:
      'retention deletes unpublished outbox rows and unprocessed inbox rows older than the window',
    edits: retentionTakesUnfinished,
    mustFailIn: ['e2e/test/15-retention-under-faults.test.ts'],
  },
  {
    name: 'retention-session-lock',
    breaks:
      'retention holds its advisory lock for the session, which a pooler in transaction mode leaves on a server connection',
    edits: retentionSessionLock,
    mustFailIn: ['packages/outbox/test/ops/retention-behind-pooler.test.ts'],
  },
  {
    name: 'stream-positions-believed',
    breaks:
      "a @platformatic/kafka member reads on from its stream's positions after a rebalance, not from the committed offsets: what it had read ahead or had in flight skips offsets",
    edits: streamPositionsBelieved,
    // The same failure as the adapter before issue 35 (checked on it): offsets 10-29 never stored.
    mustFailIn: ['packages/outbox/test/receive/platformatic-rebalance.test.ts'],
  },
  {
    name: 'rejoin-without-deadline',
    breaks:
      'a @platformatic/kafka member whose rejoin never ends waits for it for ever, owning nothing',
    edits: rejoinWithoutDeadline,
    mustFailIn: ['packages/outbox/test/receive/platformatic-failed-rejoin.test.ts'],
  },
  {
    name: 'unbounded-admission-wait',
    breaks:
      'a request the api cannot start waits for a slot without bound instead of a 503 with Retry-After within the admission wait',
    edits: unboundedAdmissionWait,
    mustFailIn: ['services/order-service/test/http/overload.test.ts'],
  },
  {
    name: 'unbounded-admission-queue',
    breaks:
      'any number of requests wait for a slot, so under an overload each refusal comes only after the whole admission wait',
    edits: unboundedAdmissionQueue,
    mustFailIn: ['services/order-service/test/http/overload.test.ts'],
  },
  {
    name: 'group-wait-unbounded',
    breaks:
      'an admitted POST /orders waits for a group of the group commit without bound, instead of a 503 once the admission wait has passed since its arrival',
    edits: groupWaitUnbounded,
    mustFailIn: ['services/order-service/test/http/overload.test.ts'],
  },
  {
    name: 'logins-granted-all',
    breaks:
      "the migrate step grants every role's login all privileges on every table, instead of revoking what its role does not declare",
    edits: loginsGrantedAll,
    mustFailIn: ['services/order-service/test/database/role-logins.test.ts'],
  },
]);
