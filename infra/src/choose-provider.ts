import { dockerAnswers } from './docker/docker-answers.ts';
import { InfraError } from './errors.ts';

/**
 * Where the servers come from: processes on this machine, Docker containers, or servers someone
 * else runs (connection strings from env; no chaos controls).
 */
export type ProviderName = 'local' | 'docker' | 'external';

const providers: readonly ProviderName[] = ['local', 'docker', 'external'];

function isProviderName(value: string): value is ProviderName {
  return providers.some((provider) => provider === value);
}

/**
 * STACK_PROVIDER when set; otherwise `docker` when a Docker engine answers, else `local`
 * (what CI and these machines run).
 */
export async function chooseProvider(
  env: NodeJS.ProcessEnv,
  probe: (env: NodeJS.ProcessEnv) => Promise<boolean> = dockerAnswers,
): Promise<ProviderName> {
  const wanted = env['STACK_PROVIDER'];
  if (wanted !== undefined && wanted !== '') {
    if (!isProviderName(wanted)) {
      throw new InfraError('UNSUPPORTED', `STACK_PROVIDER=${wanted} is not a provider`, {
        hint: `set STACK_PROVIDER to one of ${providers.join(', ')}, or unset it to choose automatically`,
      });
    }
    return wanted;
  }
  return (await probe(env)) ? 'docker' : 'local';
}
