import { InfraError } from '../errors.ts';
import { pollUntil } from '../poll.ts';
import { isReady } from '../readiness.ts';
import type { ComponentRecord, ExternalRecord } from '../component-record.ts';
import type { ServerName } from '../up-options.ts';
import { redactUrl } from '../redact-url.ts';

/** Refusal for every chaos control: these servers are someone else's to stop. */
export function refuseChaos(record: ComponentRecord, control: string): never {
  throw new InfraError(
    'UNSUPPORTED',
    `cannot ${control} ${record.name}: chaos controls need the local or docker provider`,
    {
      hint: 'this stack uses STACK_PROVIDER=external (servers run elsewhere); unset it to run your own',
    },
  );
}

function required(env: NodeJS.ProcessEnv, names: readonly string[], what: string): string {
  for (const name of names) {
    const value = env[name];
    if (value) return value;
  }
  throw new InfraError('CONFIG_MISSING', `STACK_PROVIDER=external needs ${names.join(' or ')}`, {
    hint: `set ${names[0]} to ${what}`,
  });
}

/**
 * Servers someone else runs: PostgreSQL from DATABASE_URL (or STACK_POSTGRES_URL), Kafka from
 * KAFKA_BROKERS (comma-separated host:port), Kafka Connect from CONNECT_URL. Read once, when
 * the stack is brought up.
 */
export function defineExternal(server: ServerName, env: NodeJS.ProcessEnv): ExternalRecord {
  const common = {
    kind: 'external',
    readyTimeoutMs: 30_000,
    stopSignal: 'SIGTERM',
    ports: {},
  } as const;
  if (server === 'postgres') {
    const url = required(
      env,
      ['DATABASE_URL', 'STACK_POSTGRES_URL'],
      'a connection string, e.g. postgres://user:password@host:5432/postgres',
    );
    return {
      ...common,
      name: 'postgres',
      readiness: { type: 'postgres', url },
      endpoints: { url },
    };
  }
  if (server === 'connect') {
    const url = required(env, ['CONNECT_URL'], "Kafka Connect's REST API, e.g. http://host:8083");
    return {
      ...common,
      name: 'connect',
      readiness: { type: 'http', url: `${url.replace(/\/+$/, '')}/connectors` },
      endpoints: { url },
    };
  }
  const brokers = required(env, ['KAFKA_BROKERS'], 'the brokers, e.g. host1:9092,host2:9092')
    .split(',')
    .map((broker) => broker.trim())
    .filter((broker) => broker !== '');
  return {
    ...common,
    name: 'kafka',
    readiness: { type: 'kafka', brokers },
    endpoints: { brokers: brokers.join(',') },
  };
}

/** `up` with external servers: nothing to start, but they must answer. */
export async function awaitExternal(record: ComponentRecord): Promise<void> {
  try {
    await pollUntil(() => isReady(record.readiness), {
      timeoutMs: record.readyTimeoutMs,
      intervalMs: 500,
      description: `${record.name} to answer`,
    });
  } catch (error) {
    const where = record.endpoints['brokers'] ?? redactUrl(record.endpoints['url'] ?? '');
    throw new InfraError('NOT_READY', `external ${record.name} at ${where} does not answer`, {
      hint:
        record.name === 'postgres'
          ? 'check DATABASE_URL (host, port, user, password) and that the server accepts connections'
          : record.name === 'connect'
            ? 'check CONNECT_URL and that the worker is reachable from here'
            : 'check KAFKA_BROKERS and that the brokers are reachable from here',
      cause: error,
    });
  }
}
