import { describe, expect, it } from 'vitest';
import { parseRoles, roleProcessName, startInOrder } from './roles.ts';

const known = ['api', 'relay', 'consumer'] as const;

describe('parseRoles', () => {
  it('prefers --roles, then ROLES, then all', () => {
    expect(parseRoles(['--roles', 'relay'], { ROLES: 'api' }, known)).toEqual(['relay']);
    expect(parseRoles([], { ROLES: 'api, consumer' }, known)).toEqual(['api', 'consumer']);
    expect(parseRoles([], {}, known)).toEqual(['api', 'relay', 'consumer']);
  });

  it('names the source of an unknown role', () => {
    expect(() => parseRoles(['--roles=api,web'], {}, known)).toThrow(
      /--roles has unknown role "web"/,
    );
    expect(() => parseRoles([], { ROLES: 'x' }, known)).toThrow(/ROLES has unknown role "x"/);
  });
});

describe('startInOrder', () => {
  it('stops in reverse order, and stops what started when a later part fails', async () => {
    const events: string[] = [];
    const part = (name: string) => async () => {
      events.push(`start ${name}`);
      return { stop: async () => void events.push(`stop ${name}`) };
    };
    const running = await startInOrder([part('a'), part('b')]);
    await running.stop();
    expect(events).toEqual(['start a', 'start b', 'stop b', 'stop a']);

    events.length = 0;
    const failing = async () => {
      throw new Error('boom');
    };
    await expect(startInOrder([part('a'), failing])).rejects.toThrow('boom');
    expect(events).toEqual(['start a', 'stop a']);
  });
});

it('names a process after its roles: one, several, or the whole service', () => {
  const known = ['api', 'relay', 'consumer'];
  expect(roleProcessName('order-service', ['relay'], known)).toBe('order-relay');
  expect(roleProcessName('order-service', ['api', 'relay'], known)).toBe('order-api+relay');
  expect(roleProcessName('order-service', ['consumer', 'api', 'relay'], known)).toBe(
    'order-service',
  );
});
