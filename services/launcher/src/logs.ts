#!/usr/bin/env node
/**
 * `pnpm logs [role…]`: the logs of a running system's roles, readable (the roles write JSON for
 * machines), from another shell than the one `pnpm dev` runs in. Every role, or the roles
 * named: `order-relay`, or `payment` for every payment role. Follows until Ctrl-C.
 */
import { parseArgs } from 'node:util';
import { InfraError, Stack, untilStopSignal } from '@outbox-inbox/infra';
import { LauncherError } from './launcher-error.ts';
import { followRoleLogs } from './logs/follow-role-logs.ts';

const usage = `usage: pnpm logs [role…] [--all] [--name <stack>]

  role      order-relay, payment-processor, … or a service: order, payment (default: every role)
  --all     from the start of the logs (default: only what is written from now on)
  --name    the stack (default: $STACK_NAME or "dev")`;

try {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      all: { type: 'boolean', default: false },
      name: { type: 'string', default: process.env['STACK_NAME'] ?? 'dev' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(usage);
  } else {
    const logs = followRoleLogs({
      stack: Stack.open(values.name),
      only: positionals,
      from: values.all ? 'start' : 'end',
      colorize: process.stdout.isTTY,
      write: (text) => process.stdout.write(text),
    });
    console.error(`following ${logs.components.join(', ')} (Ctrl-C stops)`);
    await untilStopSignal();
    logs.stop();
  }
} catch (error) {
  if (!(error instanceof InfraError || error instanceof LauncherError)) throw error;
  console.error(`error: ${error.message}`);
  if (error instanceof InfraError && error.hint) console.error(`  fix: ${error.hint}`);
  process.exitCode = 1;
}
