import type { ProcessComponent } from '@outbox-inbox/infra';
import { roleCommand, wiringEnv, type Command } from '@outbox-inbox/service-kit';
import type { RoleProcess } from './role-processes.ts';
import { settingsFor } from './settings-for.ts';

export interface RoleComponentOptions {
  /** The api's PORT, or the OPS_PORT where another role serves health and metrics. */
  readonly port: number;
  readonly databaseUrl: string;
  readonly kafkaBrokers: readonly string[];
  /** Service settings for the whole system; each process gets those its service reads. */
  readonly settings?: Readonly<Record<string, string>>;
  /** What runs the role: the service's main program unless a harness brings its own. */
  readonly command?: Command;
  /** Started once `/health/live` answers, or (the default) once `/health/ready` does. */
  readonly readiness?: 'live' | 'ready';
  readonly readyTimeoutMs?: number;
  readonly logLevel?: string;
}

/**
 * The stack component that runs one role process: its command, its environment (wiring, then
 * settings, then the command's own) and how to tell it is ready.
 */
export function roleComponent(
  process: RoleProcess,
  options: RoleComponentOptions,
): ProcessComponent {
  const { service, role, name } = process;
  const command = options.command ?? roleCommand(service, role);
  const url = `http://127.0.0.1:${options.port}`;
  return {
    name,
    command: command.command,
    args: command.args,
    cwd: command.cwd,
    env: {
      ...wiringEnv({
        databaseUrl: options.databaseUrl,
        kafkaBrokers: options.kafkaBrokers,
        host: '127.0.0.1',
        role,
        port: options.port,
        logLevel: options.logLevel ?? 'info',
      }),
      KAFKAJS_NO_PARTITIONER_WARNING: '1',
      ...settingsFor(service, options.settings ?? {}),
      ...command.env,
    },
    readiness: { type: 'http', url: `${url}/health/${options.readiness ?? 'ready'}` },
    readyTimeoutMs: options.readyTimeoutMs ?? 30_000,
    endpoints: { url, health: `${url}/health/ready`, metrics: `${url}/metrics` },
  };
}
