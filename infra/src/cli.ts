#!/usr/bin/env node
/**
 * `pnpm stack <command>`: the stack's controls from a shell. Every command works on the state
 * file, so a second shell (or a workshop attendee) can kill what the first one started.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { devPorts } from './dev-ports.ts';
import { InfraError } from './errors.ts';
import { formatBytes } from './prune.ts';
import { redactUrl } from './redact-url.ts';
import type { PartitionLeader } from './kafka-cluster/partition-leaders.ts';
import { Stack, type ComponentStatus } from './stack.ts';
import { stacksHome } from './state-file.ts';
import { untilStopSignal } from './stop-signal.ts';
import type { ServerName } from './up-options.ts';

const usage = `usage: pnpm stack <command> [options]

  up [--detach] [--kafka-brokers N] [--connect]
                             start PostgreSQL and Kafka (foreground until Ctrl-C, unless --detach);
                             N Kafka nodes kafka-1 … kafka-N (default $STACK_KAFKA_BROKERS or 1);
                             --connect: Kafka Connect with Debezium too (the CDC relay)
  add <server>               add a server to a running stack and start it (connect: Kafka Connect
                             with Debezium, for the CDC relay); the stack keeps its owner
  down                       stop everything of the stack and delete its data
  prune                      delete the folders of stacks that are not running (the logs and
                             data a failed test run keeps), and say how much that freed
  status [--json]            components, pids, endpoints, log files, partition leaders
  start|stop|kill|restart <component>
  start|restart <component> --env NAME=VALUE …
                             set the variable for this start and every later one (NAME= removes it);
                             process components (the services' roles) only
  wipe <component>           restart with empty storage (Kafka lost its data)
  pause|resume <component>   freeze (SIGSTOP) and thaw (SIGCONT) its processes: a gray failure
  logs <component> [--follow]

options: --name <stack> (default: $STACK_NAME or "dev")`;

const serverNames: readonly ServerName[] = ['postgres', 'kafka', 'connect'];

function isServerName(name: string): name is ServerName {
  return serverNames.some((known) => known === name);
}

/** `--env NAME=VALUE` options as changes for `Stack.setEnv`: `NAME=` removes the variable. */
function envChanges(options: readonly string[]): Record<string, string | undefined> {
  const changes: Record<string, string | undefined> = {};
  for (const option of options) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(option);
    if (!match?.[1]) {
      throw new InfraError('UNSUPPORTED', `--env takes NAME=VALUE, not "${option}"`, {
        hint: usage,
      });
    }
    changes[match[1]] = match[2] === '' ? undefined : match[2];
  }
  return changes;
}

/** Connection strings may carry a password (external provider): never print it. */
function printable(components: readonly ComponentStatus[]): ComponentStatus[] {
  return components.map((component) => ({
    ...component,
    endpoints: Object.fromEntries(
      Object.entries(component.endpoints).map(([key, value]) => [key, redactUrl(value)]),
    ),
  }));
}

/** Partition leaders, or why they could not be read (a frozen node answers nothing). */
async function leadersOrError(
  stack: Stack,
): Promise<{ partitions: PartitionLeader[] } | { partitionsError: string }> {
  try {
    return { partitions: await stack.partitionLeaders() };
  } catch (error) {
    return { partitionsError: error instanceof Error ? error.message : String(error) };
  }
}

function printStatus(
  stack: Stack,
  leaders: { partitions: PartitionLeader[] } | { partitionsError: string },
): void {
  console.log(`stack "${stack.name}"`);
  for (const component of printable(stack.status())) {
    const endpoints = Object.entries(component.endpoints)
      .map(([key, value]) => `${key}=${value}`)
      .join(' ');
    const state = component.paused
      ? `paused   pid ${component.pid}`
      : component.running
        ? `running  pid ${component.pid}`
        : 'stopped';
    console.log(`  ${component.name.padEnd(20)} ${state.padEnd(20)} ${endpoints}`);
    if (component.logFile) console.log(`  ${''.padEnd(20)} log: ${component.logFile}`);
  }
  if ('partitionsError' in leaders) {
    console.log(`partition leaders: unknown (${leaders.partitionsError})`);
    return;
  }
  if (leaders.partitions.length > 0) console.log('partition leaders:');
  for (const { topic, partition, leader, isr } of leaders.partitions) {
    const place = `${topic}/${partition}`.padEnd(24);
    console.log(`  ${place} leader ${(leader ?? 'none').padEnd(10)} in sync: ${isr.join(',')}`);
  }
}

/** The command line, parsed: the stack's name defaults to $STACK_NAME, else "dev". */
function parseCommandLine(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string', default: process.env['STACK_NAME'] ?? 'dev' },
      detach: { type: 'boolean', default: false },
      'kafka-brokers': { type: 'string' },
      connect: { type: 'boolean', default: false },
      env: { type: 'string', multiple: true, default: [] },
      json: { type: 'boolean', default: false },
      follow: { type: 'boolean', short: 'f', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
}

/** One command to run: the stack it works on, the component after it, and the options. */
interface Invocation {
  readonly command: string;
  readonly name: string;
  readonly component: string | undefined;
  readonly values: ReturnType<typeof parseCommandLine>['values'];
}

function needComponent({ command, component }: Invocation): string {
  if (!component)
    throw new InfraError('UNKNOWN_COMPONENT', `\`${command}\` needs a component name`, {
      hint: usage,
    });
  return component;
}

async function up({ name, values }: Invocation): Promise<void> {
  const reaped = await Stack.reapOrphans();
  if (reaped.length > 0) console.log(`stopped leftovers of crashed runs: ${reaped.join(', ')}`);
  const started = Date.now();
  const stack = await Stack.up({
    name,
    detached: values.detach,
    ports: name === 'dev' ? devPorts() : undefined,
    servers: values.connect ? ['postgres', 'kafka', 'connect'] : ['postgres', 'kafka'],
    ...(values['kafka-brokers'] === undefined
      ? {}
      : { kafkaBrokers: Number(values['kafka-brokers']) }),
  });
  console.log(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  printStatus(stack, await leadersOrError(stack));
  if (values.detach) return;
  console.log('\nCtrl-C stops everything.');
  await untilStopSignal();
  await stack.down();
  console.log('stopped');
}

async function add(invocation: Invocation): Promise<void> {
  const { name } = invocation;
  const server = needComponent(invocation);
  if (!isServerName(server)) {
    throw new InfraError('UNSUPPORTED', `"${server}" is not a server`, {
      hint: `servers: ${serverNames.join(', ')}`,
    });
  }
  const stack = Stack.open(name);
  await stack.addServer(server, {
    ports: name === 'dev' ? devPorts() : undefined,
  });
  const added = server === 'kafka' ? stack.kafkaNodes : [server];
  for (const component of printable(stack.status()).filter((c) => added.includes(c.name))) {
    const endpoints = Object.entries(component.endpoints)
      .map(([key, value]) => `${key}=${value}`)
      .join(' ');
    console.log(`${component.name}: running  ${endpoints}`);
  }
}

async function down({ name }: Invocation): Promise<void> {
  // Down is where a stack should end up: already there is success, not an error.
  const stack = Stack.openIfExists(name);
  if (stack === undefined) {
    console.log(`no stack named "${name}" is running: nothing to do`);
    return;
  }
  await stack.down();
  console.log(`stack "${name}" is down`);
}

async function prune(): Promise<void> {
  const pruned = await Stack.prune();
  const home = path.relative(process.cwd(), stacksHome()) || '.';
  for (const { name, bytes } of pruned) {
    console.log(`removed ${path.join(home, name)} (${formatBytes(bytes)})`);
  }
  const freed = pruned.reduce((total, { bytes }) => total + bytes, 0);
  console.log(
    pruned.length === 0
      ? 'no stopped stacks to remove: nothing to do'
      : `freed ${formatBytes(freed)}; running stacks were left alone`,
  );
}

async function status({ name, values }: Invocation): Promise<void> {
  const stack = Stack.open(name);
  const partitions = await leadersOrError(stack);
  if (values.json) {
    const components = printable(stack.status());
    console.log(JSON.stringify({ name, components, ...partitions }, null, 2));
  } else printStatus(stack, partitions);
}

/** start, stop, kill, restart or wipe one component; start and restart may set its --env first. */
async function control(
  command: 'start' | 'stop' | 'kill' | 'restart' | 'wipe',
  invocation: Invocation,
): Promise<void> {
  const target = needComponent(invocation);
  const stack = Stack.open(invocation.name);
  const env = invocation.values.env;
  if (env.length > 0) {
    if (command !== 'start' && command !== 'restart') {
      throw new InfraError('UNSUPPORTED', `--env goes with start or restart, not ${command}`);
    }
    stack.setEnv(target, envChanges(env));
  }
  if (command === 'kill') {
    const killed = await stack.kill(target);
    console.log(`${target}: ${killed ? 'killed (SIGKILL)' : 'was not running'}`);
    return;
  }
  await stack[command](target);
  console.log(`${target}: ${command} done`);
}

async function pauseOrResume(command: 'pause' | 'resume', invocation: Invocation): Promise<void> {
  const target = needComponent(invocation);
  Stack.open(invocation.name)[command](target);
  console.log(`${target}: ${command === 'pause' ? 'paused (SIGSTOP)' : 'resumed (SIGCONT)'}`);
}

/** The program and arguments that print a component's last lines of output. */
function logReader(stack: Stack, target: string, follow: boolean): [string, string[]] {
  const logFile = stack.logFile(target);
  // Containers (the docker provider) keep their output in Docker, not in a file.
  const record = stack.state.components[target];
  const containerId = record?.kind === 'container' ? record.containerId : undefined;
  if (logFile) return ['tail', ['-n', '200', ...(follow ? ['-F'] : []), logFile]];
  if (containerId)
    return ['docker', ['logs', '--tail', '200', ...(follow ? ['-f'] : []), containerId]];
  throw new InfraError('UNSUPPORTED', `${target} has no log here (an external server?)`);
}

async function logs(invocation: Invocation): Promise<void> {
  const stack = Stack.open(invocation.name);
  const target = needComponent(invocation);
  const [program, args] = logReader(stack, target, invocation.values.follow);
  const tail = spawn(program, args, { stdio: 'inherit' });
  await new Promise((resolve) => tail.once('exit', resolve));
}

/** The commands by name; a Map, so that no name reaches an object's inherited members. */
const commands = new Map<string, (invocation: Invocation) => Promise<void>>([
  ['up', up],
  ['add', add],
  ['down', down],
  ['prune', prune],
  ['status', status],
  ['start', (invocation) => control('start', invocation)],
  ['stop', (invocation) => control('stop', invocation)],
  ['kill', (invocation) => control('kill', invocation)],
  ['restart', (invocation) => control('restart', invocation)],
  ['wipe', (invocation) => control('wipe', invocation)],
  ['pause', (invocation) => pauseOrResume('pause', invocation)],
  ['resume', (invocation) => pauseOrResume('resume', invocation)],
  ['logs', logs],
]);

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommandLine(argv);
  const [command, component] = positionals;
  if (values.help || !command) {
    console.log(usage);
    return;
  }
  const run = commands.get(command);
  if (run === undefined) {
    throw new InfraError('UNSUPPORTED', `unknown command "${command}"`, { hint: usage });
  }
  await run({ command, name: values.name, component, values });
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
