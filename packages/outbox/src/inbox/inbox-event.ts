import type { ReceivedEvent } from '../kafka/received-event.ts';

/** An inbox row as an inbox handler sees it. */
export interface InboxEvent extends ReceivedEvent {
  readonly receivedAt: Date;
  /** Failed attempts before this one. */
  readonly attempts: number;
}
