import { describe, expect, it } from 'vitest';
import { ConfigError, createEnvReader } from './env-reader.ts';

describe('createEnvReader', () => {
  it('reads values and applies defaults', () => {
    const env = createEnvReader({ PORT: '3001', BROKERS: 'a:1, b:2', URL: 'postgres://x/y' });
    expect(env.integer('PORT', { min: 1, max: 65535 })).toBe(3001);
    expect(env.integer('MISSING', { default: 7 })).toBe(7);
    expect(env.list('BROKERS')).toEqual(['a:1', 'b:2']);
    expect(env.url('URL', ['postgres', 'postgresql'])).toBe('postgres://x/y');
  });

  it('names the variable when a value is missing or bad', () => {
    const env = createEnvReader({
      PORT: 'abc',
      URL: 'http://x',
      LEVEL: 'loud',
      EMPTY: ' ',
    });
    expect(() => env.integer('PORT')).toThrow(/PORT must be an integer/);
    expect(() => env.url('URL', ['postgres'])).toThrow(/URL must be a postgres URL/);
    expect(() => env.oneOf('LEVEL', ['info', 'debug'], 'info')).toThrow(/LEVEL must be one of/);
    expect(() => env.string('EMPTY')).toThrow(ConfigError);
    expect(() => env.string('DATABASE_URL')).toThrow('DATABASE_URL is required but not set');
  });
});
