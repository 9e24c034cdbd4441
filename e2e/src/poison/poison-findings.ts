import type { ParkedMessage } from '@outbox-inbox/outbox/ops';
import type { Landed } from './produce-poison.ts';
import type { PoisonMessage } from './poison-messages.ts';

const where = (at: Landed): string => `${at.topic}/${at.partition}/${at.offset}`;

/** The key an injected message is known by, from where it landed or where it was parked. */
export function landedKey(at: Landed): string {
  return where(at);
}

/**
 * What is wrong with how the poison ended: each message parked exactly once, with its reason
 * and its bytes as produced. Empty when every one is where an operator finds it.
 */
export function poisonProblems(
  corpus: readonly PoisonMessage[],
  landed: readonly Landed[],
  parked: readonly ParkedMessage[],
): string[] {
  const problems: string[] = [];
  corpus.forEach((message, n) => {
    const at = landed[n];
    if (at === undefined) return problems.push(`${message.name}: never produced`);
    const found = parked.filter((row) => where(row) === where(at));
    const [row] = found;
    if (row === undefined) return problems.push(`${message.name} (${where(at)}): not parked`);
    if (found.length > 1) problems.push(`${message.name}: parked ${found.length} times`);
    if (!message.reason.test(row.reason))
      problems.push(`${message.name}: parked because "${row.reason}", expected ${message.reason}`);
    const sameValue =
      message.value === null ? row.value === null : row.value?.equals(message.value) === true;
    if (!sameValue) problems.push(`${message.name}: parked value differs from the bytes produced`);
    const sameKey = message.key === null ? row.key === null : row.key?.equals(message.key) === true;
    if (!sameKey) problems.push(`${message.name}: parked key differs from the bytes produced`);
    return undefined;
  });
  return problems;
}
