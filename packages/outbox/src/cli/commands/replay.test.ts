import { expect, it } from 'vitest';
import { parseReplaySelection } from './replay.ts';

const parse = (options: Record<string, string>) =>
  parseReplaySelection((name) => new Map(Object.entries(options)).get(name));

it('parses a selection and refuses an empty or malformed one', () => {
  expect(parse({ 'from-id': '10', 'to-id': '20', topic: 'order.events' })).toEqual({
    fromId: '10',
    toId: '20',
    topic: 'order.events',
  });
  expect(parse({ since: '2024-01-01T00:00:00Z' })).toEqual({
    since: new Date('2024-01-01T00:00:00Z'),
  });
  expect(() => parse({})).toThrow(/at least one/);
  expect(() => parse({ 'from-id': 'abc' })).toThrow(/integer/);
  expect(() => parse({ 'from-id': '-1' })).toThrow(/integer/);
  expect(() => parse({ since: 'yesterday' })).toThrow(/ISO/);
});
