import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { stackDir, stacksHome } from './state-file.ts';

describe('stack folders', () => {
  // The folders are passed to initdb and Kafka as arguments: a relative `-x` would be an option.
  it('makes a relative STACK_HOME absolute', () => {
    const home = stacksHome({ STACK_HOME: '-stacks' });
    expect(path.isAbsolute(home)).toBe(true);
    expect(home).toBe(path.resolve('-stacks'));
  });

  it('refuses a stack name that is not a plain folder name', () => {
    for (const name of ['-dev', '../escape', 'a/b', '', '.hidden']) {
      expect(() => stackDir(name, {})).toThrow(/invalid stack name/);
    }
    expect(stackDir('e2e-1-kafka-killed-123', { STACK_HOME: '/tmp/s' })).toBe(
      '/tmp/s/e2e-1-kafka-killed-123',
    );
  });
});
