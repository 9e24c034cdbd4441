import type { Message } from '@platformatic/kafka';
import { expect, it } from 'vitest';
import { PartitionPositions } from './stream-positions.ts';

type RawMessage = Message<Buffer, Buffer, Buffer, Buffer>;

const at = (offset: number, partition = 0): RawMessage =>
  ({ topic: 'orders', partition, offset: BigInt(offset) }) as RawMessage;
const offsets = (messages: readonly RawMessage[]): number[] =>
  messages.map((m) => Number(m.offset));

it('hands over each partition in offset order and stops at a gap or a rewind', () => {
  const positions = new PartitionPositions();
  const none = (): void => undefined;
  expect(positions.take([at(0), at(1), at(7, 1), at(2)], none)).toEqual({
    next: [at(0), at(1), at(7, 1), at(2)],
    outOfPlace: false,
  });
  // 3 and 4 never came: nothing from 5 on is handed over.
  const gap = positions.take([at(8, 1), at(5), at(6)], none);
  expect(offsets(gap.next)).toEqual([8]);
  expect(gap.outOfPlace).toBe(true);
  // An offset handed over already.
  const rewind = positions.take([at(1)], none);
  expect(rewind).toEqual({ next: [], outOfPlace: true });
  expect(offsets(positions.take([at(3), at(4)], none).next)).toEqual([3, 4]);
});

it("believes a gap only when reads from the same offset returned it three times in a row (Kafka's own: markers, compaction)", () => {
  const positions = new PartitionPositions();
  const believed: string[] = [];
  const tell = (_topic: string, partition: number, from: bigint, to: bigint): void => {
    believed.push(`${partition}: ${from}-${to}`);
  };
  positions.take([at(0)], tell);
  expect(positions.take([at(2)], tell).outOfPlace).toBe(true);
  expect(positions.take([at(2)], tell).outOfPlace).toBe(true);
  expect(believed).toEqual([]);
  expect(positions.take([at(2), at(3)], tell)).toEqual({ next: [at(2), at(3)], outOfPlace: false });
  expect(believed).toEqual(['0: 1-2']);
  // Another gap starts the count again.
  expect(positions.take([at(6)], tell).outOfPlace).toBe(true);
  expect(positions.take([at(5)], tell).outOfPlace).toBe(true);
  expect(positions.take([at(6)], tell).outOfPlace).toBe(true);
});
