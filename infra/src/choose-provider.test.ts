import { describe, expect, it } from 'vitest';
import { chooseProvider } from './choose-provider.ts';
import { InfraError } from './errors.ts';

const dockerUp = async (): Promise<boolean> => true;
const dockerDown = async (): Promise<boolean> => false;

describe('chooseProvider', () => {
  it('takes docker when a Docker engine answers and nothing is asked for', async () => {
    expect(await chooseProvider({}, dockerUp)).toBe('docker');
  });

  it('falls back to local when no Docker engine answers', async () => {
    expect(await chooseProvider({}, dockerDown)).toBe('local');
    expect(await chooseProvider({ STACK_PROVIDER: '' }, dockerDown)).toBe('local');
  });

  it('obeys STACK_PROVIDER without asking Docker', async () => {
    const probe = async (): Promise<boolean> => {
      throw new Error('Docker must not be probed when the provider is explicit');
    };
    expect(await chooseProvider({ STACK_PROVIDER: 'local' }, probe)).toBe('local');
    expect(await chooseProvider({ STACK_PROVIDER: 'docker' }, probe)).toBe('docker');
    expect(await chooseProvider({ STACK_PROVIDER: 'external' }, probe)).toBe('external');
  });

  it('names the variable when the provider is unknown', async () => {
    const error = await chooseProvider({ STACK_PROVIDER: 'podman' }, dockerUp).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(InfraError);
    expect(error).toMatchObject({ code: 'UNSUPPORTED' });
    expect(String(error)).toContain('STACK_PROVIDER=podman');
  });
});
