#!/usr/bin/env node
/**
 * `pnpm stack <command>`: the stack's controls from a shell. Every command works on the state
 * file, so a second shell (or a workshop attendee) can kill what the first one started.
 */
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { devPorts } from './dev-ports.ts';
import { InfraError } from './errors.ts';
import { Stack } from './stack.ts';

const usage = `usage: pnpm stack <command> [options]

  up [--detach]              start PostgreSQL and Kafka (foreground until Ctrl-C, unless --detach)
  down                       stop everything of the stack and delete its data
  status [--json]            components, pids, endpoints, log files
  start|stop|kill|restart <component>
  wipe <component>           restart with empty storage (Kafka lost its data)
  logs <component> [--follow]

options: --name <stack> (default: $STACK_NAME or "dev")`;

/** Connection strings may carry a password (external provider): never print it. */
function withoutPassword(value: string): string {
  return value.replace(/(\/\/[^:/@]+:)[^@]+@/, '$1***@');
}

function printStatus(stack: Stack): void {
  console.log(`stack "${stack.name}"`);
  for (const component of stack.status()) {
    const endpoints = Object.entries(component.endpoints)
      .map(([key, value]) => [key, withoutPassword(value)] as const)
      .map(([key, value]) => `${key}=${value}`)
      .join(' ');
    const state = component.running ? `running  pid ${component.pid}` : 'stopped';
    console.log(`  ${component.name.padEnd(20)} ${state.padEnd(20)} ${endpoints}`);
    if (component.logFile) console.log(`  ${''.padEnd(20)} log: ${component.logFile}`);
  }
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string', default: process.env['STACK_NAME'] ?? 'dev' },
      detach: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      follow: { type: 'boolean', short: 'f', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, component] = positionals;
  if (values.help || !command) {
    console.log(usage);
    return;
  }
  const name = values.name;
  const needComponent = (): string => {
    if (!component)
      throw new InfraError('UNKNOWN_COMPONENT', `\`${command}\` needs a component name`, {
        hint: usage,
      });
    return component;
  };

  switch (command) {
    case 'up': {
      const reaped = await Stack.reapOrphans();
      if (reaped.length > 0) console.log(`stopped leftovers of crashed runs: ${reaped.join(', ')}`);
      const started = Date.now();
      const stack = await Stack.up({
        name,
        detached: values.detach,
        ports: name === 'dev' ? devPorts() : undefined,
      });
      console.log(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      printStatus(stack);
      if (values.detach) return;
      console.log('\nCtrl-C stops everything.');
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await stack.down();
      return;
    }
    case 'down':
      await Stack.open(name).down();
      console.log(`stack "${name}" is down`);
      return;
    case 'status': {
      const stack = Stack.open(name);
      if (values.json) console.log(JSON.stringify({ name, components: stack.status() }, null, 2));
      else printStatus(stack);
      return;
    }
    case 'start':
    case 'stop':
    case 'kill':
    case 'restart':
    case 'wipe': {
      const target = needComponent();
      await Stack.open(name)[command](target);
      console.log(`${target}: ${command === 'kill' ? 'killed (SIGKILL)' : `${command} done`}`);
      return;
    }
    case 'logs': {
      const stack = Stack.open(name);
      const target = needComponent();
      const logFile = stack.logFile(target);
      // Containers (the docker provider) keep their output in Docker, not in a file.
      const containerId = stack.state.components[target]?.containerId;
      let command: [string, string[]];
      if (logFile) command = ['tail', ['-n', '200', ...(values.follow ? ['-F'] : []), logFile]];
      else if (containerId)
        command = [
          'docker',
          ['logs', '--tail', '200', ...(values.follow ? ['-f'] : []), containerId],
        ];
      else throw new InfraError('UNSUPPORTED', `${target} has no log here (an external server?)`);
      const tail = spawn(command[0], command[1], { stdio: 'inherit' });
      await new Promise((resolve) => tail.once('exit', resolve));
      return;
    }
    default:
      throw new InfraError('UNSUPPORTED', `unknown command "${command}"`, { hint: usage });
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof InfraError) {
    console.error(`error: ${error.message}`);
    if (error.hint) console.error(`  fix: ${error.hint}`);
    if (error.logFile) console.error(`  log: ${error.logFile}`);
  } else {
    console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  }
  process.exit(1);
});
