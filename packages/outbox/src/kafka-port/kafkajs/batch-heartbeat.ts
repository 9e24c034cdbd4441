import type { EachBatchPayload } from 'kafkajs';

/** Heartbeat errors after which this member no longer owns what it is working on. */
const GROUP_MOVED_ON = new Set([
  'REBALANCE_IN_PROGRESS',
  'ILLEGAL_GENERATION',
  'UNKNOWN_MEMBER_ID',
  'NOT_COORDINATOR_FOR_GROUP',
]);

export interface BatchHeartbeat {
  /** The group rebalanced or evicted this member: stop working on the batch, commit nothing more. */
  readonly lost: boolean;
  stop(): void;
}

/**
 * Heartbeats every `intervalMs` while a batch is being handled. kafkajs sends heartbeats only
 * between batches and when eachBatch calls `heartbeat()`, so a long INSERT, a slow handler or a
 * database outage retried in place went silent, and a live member was evicted once the session
 * timeout passed. With the heartbeat guaranteed, the session timeout can be short, and it is the
 * session timeout that decides how long a killed member's partitions stay unassigned.
 * (kafkajs shares one heartbeat request among concurrent callers and skips it when one was sent
 * less than the interval ago, so extra calls cost nothing.)
 */
export function startBatchHeartbeat(payload: EachBatchPayload, intervalMs: number): BatchHeartbeat {
  let lost = false;
  const timer = setInterval(() => {
    payload.heartbeat().catch((error: unknown) => {
      const type = (error as { type?: unknown } | null)?.type;
      if (typeof type === 'string' && GROUP_MOVED_ON.has(type)) lost = true;
    });
  }, intervalMs);
  return {
    get lost() {
      return lost;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
