import type { RecordOutcome, SendReport } from '../kafka-client.ts';

/** A record of a send as the bookkeeping needs it: its place in the send and its key. */
export interface PlacedRecord {
  /** The record's place in the send: records of one key are in this order. */
  readonly index: number;
  /** Records of one key share it; a record without a key has none to hold back. */
  readonly key: string | undefined;
}

const UNSENT: RecordOutcome = Object.freeze({ kind: 'unsent' });

/**
 * Acked and refused records of one send, and the keys a refusal holds back: every record is
 * unsent until an adapter says otherwise, so an interrupted send reports the rest as unsent.
 */
export class SendOutcomes<R extends PlacedRecord> {
  readonly #outcomes: RecordOutcome[];
  readonly #blockedKeys = new Set<string>();
  readonly #partitionOf: (record: R) => number;
  #interruption: unknown;
  #interrupted = false;

  /** `partitionOf` tells where an acked record went, as the adapter knows it. */
  constructor(size: number, partitionOf: (record: R) => number) {
    this.#outcomes = Array.from({ length: size }, () => UNSENT);
    this.#partitionOf = partitionOf;
  }

  get interrupted(): boolean {
    return this.#interrupted;
  }

  acked(record: R): boolean {
    return this.#outcomes[record.index]?.kind === 'acked';
  }

  /** An earlier record of the same key was refused: this one must not overtake it. */
  blocks(record: R): boolean {
    return record.key !== undefined && this.#blockedKeys.has(record.key);
  }

  ack(records: readonly R[]): void {
    for (const record of records) {
      this.#outcomes[record.index] = { kind: 'acked', partition: this.#partitionOf(record) };
    }
  }

  refuse(record: R, refusal: { readonly reason: string; readonly final: boolean }): void {
    this.#outcomes[record.index] = {
      kind: 'refused',
      reason: refusal.reason,
      final: refusal.final,
    };
    if (record.key !== undefined) this.#blockedKeys.add(record.key);
  }

  interrupt(error: unknown): void {
    this.#interrupted = true;
    this.#interruption = error;
  }

  report(): SendReport {
    return { outcomes: this.#outcomes, interruption: this.#interruption };
  }
}
