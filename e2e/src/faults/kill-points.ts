import type { ServiceHooks } from '@outbox-inbox/service-kit';

/**
 * What a process does at its point: SIGKILL itself (a crash), SIGSTOP itself (a freeze: it
 * wakes when the suite sends SIGCONT), or never finish the unit of work (a hang).
 */
export type FaultEffect = 'kill' | 'freeze' | 'hang';

/** What the hook tells the point about the unit of work it is in (the relay's batch). */
export interface FaultMoment {
  readonly eventIds?: readonly string[];
}

/** A moment in a role's unit of work at which its process can be made to fail. */
export interface KillPoint {
  /** The role whose processes pass through this moment. */
  readonly role: string;
  /** The one service whose role it is, when the other service's role of that name differs. */
  readonly service?: string;
  readonly effect: FaultEffect;
  /**
   * Armed by the suite for one component at a time (see arming.ts) instead of striking at
   * random: a freeze strikes once per arming, a hang lasts until the suite disarms it.
   */
  readonly armed: boolean;
  /** How the report names it: `order-relay <description> (injected) 3x`. */
  readonly description: string;
  /** The library hooks that reach this moment, calling `act` there. */
  hooks(act: (moment: FaultMoment) => void | Promise<void>): ServiceHooks;
}

/**
 * Where the suite makes a role process fail. Another point is one more entry: the role it
 * lives in, what it does, and the library hook that reaches the moment.
 */
export const killPoints = Object.freeze({
  /** Kafka acknowledged the batch, `published_at` is not committed: the batch is sent again. */
  'relay-after-publish': {
    role: 'relay',
    effect: 'kill',
    armed: false,
    description: 'self-kill after publish',
    hooks: (act) => ({ relay: { afterPublish: () => act({}) } }),
  },
  /**
   * The same moment, frozen: the relay holds its claimed rows in an open transaction until
   * PostgreSQL ends the idle session; another relay may publish them meanwhile, and the
   * frozen one wakes later as a zombie trying to commit a batch that moved on.
   */
  'relay-freeze-after-publish': {
    role: 'relay',
    effect: 'freeze',
    armed: true,
    description: 'froze (SIGSTOP) after publish',
    hooks: (act) => ({
      relay: { afterPublish: (batch) => act({ eventIds: batch.map((event) => event.eventId) }) },
    }),
  },
  /** Every inbox handler of the armed processor hangs: each attempt ends at its timeout. */
  'processor-hang': {
    role: 'processor',
    effect: 'hang',
    armed: true,
    description: 'inbox handler hung',
    hooks: (act) => ({ inboxProcessor: { beforeHandler: () => act({}) } }),
  },
  /** The inbox writer got a batch and stored nothing yet: the batch is read again. */
  'inbox-before-store': {
    role: 'consumer',
    service: 'payment-service',
    effect: 'kill',
    armed: false,
    description: 'self-kill before storing a batch',
    hooks: (act) => ({ inboxWriter: { beforeStore: () => act({}) } }),
  },
  /** The batch's inbox rows are committed, its offset is not: the inbox must drop the repeats. */
  'inbox-before-offset-commit': {
    role: 'consumer',
    service: 'payment-service',
    effect: 'kill',
    armed: false,
    description: 'self-kill after storing a batch, before its offset commit',
    hooks: (act) => ({ inboxWriter: { beforeCommitOffset: () => act({}) } }),
  },
  /** An effect and its processed_event row are committed, the offset is not: dedup must drop the repeat. */
  'dedup-after-apply': {
    role: 'consumer',
    service: 'order-service',
    effect: 'kill',
    armed: false,
    description: 'self-kill after applying an event, before its offset commit',
    hooks: (act) => ({ dedupConsumer: { afterApply: () => act({}) } }),
  },
  /** The handler ran, `processed` is not written: the row's transaction rolls back whole. */
  'processor-before-mark': {
    role: 'processor',
    effect: 'kill',
    armed: false,
    description: 'self-kill after the handler, before marking the row processed',
    hooks: (act) => ({ inboxProcessor: { beforeMarkProcessed: () => act({}) } }),
  },
  /** POST /orders committed and its 201 has not left: the client retries with its key. */
  'api-after-order-commit': {
    role: 'api',
    service: 'order-service',
    effect: 'kill',
    armed: false,
    description: 'self-kill after POST /orders committed, before the answer',
    hooks: (act) => ({
      http: {
        beforeReply: ({ method, route, statusCode }) =>
          method === 'POST' && route === '/orders' && statusCode === 201 ? act({}) : undefined,
      },
    }),
  },
} satisfies Record<string, KillPoint>);

export type KillPointName = keyof typeof killPoints;

export function isKillPointName(name: string): name is KillPointName {
  return Object.hasOwn(killPoints, name);
}
