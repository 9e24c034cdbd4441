import { expect, it } from 'vitest';
import { parseReplayArgs } from './replay.ts';

it('parses a selection and refuses an empty or malformed one', () => {
  expect(parseReplayArgs(['--from-id', '10', '--to-id', '20', '--topic', 'order.events'])).toEqual({
    fromId: '10',
    toId: '20',
    topic: 'order.events',
  });
  expect(parseReplayArgs(['--since', '2024-01-01T00:00:00Z'])).toEqual({
    since: new Date('2024-01-01T00:00:00Z'),
  });
  expect(() => parseReplayArgs([])).toThrow(/at least one/);
  expect(() => parseReplayArgs(['--from-id', 'abc'])).toThrow(/integer/);
  expect(() => parseReplayArgs(['--since', 'yesterday'])).toThrow(/ISO/);
  expect(() => parseReplayArgs(['--everything'])).toThrow();
});
