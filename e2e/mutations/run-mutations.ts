#!/usr/bin/env node
/**
 * `pnpm test:mutations`: applies each mutation of catalog.ts to a copy of the working tree,
 * runs the tests that must catch it there, and fails when one survives. The working tree is
 * never touched. Writes e2e/report/mutations.{json,md}.
 *   node e2e/mutations/run-mutations.ts [--only <name>[,<name>…]] [--keep]
 */
import { parseArgs } from 'node:util';
import { Stack } from '@outbox-inbox/infra';
import { mutations } from './catalog.ts';
import { writeMutationReport } from './mutation-report.ts';
import { runMutation, type MutationOutcome } from './run-mutation.ts';

const { values } = parseArgs({
  options: { only: { type: 'string' }, keep: { type: 'boolean', default: false } },
});
const only = values.only?.split(',');
const selected = only ? mutations.filter((m) => only.includes(m.name)) : mutations;
if (selected.length === 0 || (only && selected.length < only.length)) {
  console.error(
    `no mutation named ${JSON.stringify(values.only)}; known: ${mutations.map((m) => m.name).join(', ')}`,
  );
  process.exit(2);
}

// One PostgreSQL and one Kafka for every mutation's tests, each of which brings its own
// databases and topics, as the suite's shared servers do: the mutations' tests break roles
// and rows, never a server. Starting them once spares each mutation a start and a stop.
const servers = await Stack.up({
  name: `mutations-${process.pid}`,
  servers: ['postgres', 'kafka'],
  kafkaHeapMb: 512,
  env: { ...process.env, STACK_PROVIDER: 'local' },
});
const outcomes: MutationOutcome[] = [];
try {
  for (const mutation of selected) {
    console.log(`\n== mutation ${mutation.name}: ${mutation.breaks}`);
    const outcome = await runMutation(mutation, { keep: values.keep, servers });
    console.log(
      `   ${outcome.verdict} in ${outcome.seconds} s${outcome.caughtBy ? ` by ${outcome.caughtBy}` : ''}`,
    );
    if (outcome.evidence) console.log(`   ${outcome.evidence}`);
    outcomes.push(outcome);
  }
} finally {
  await servers.down();
}
const report = writeMutationReport(outcomes);
console.log(`\n${report}`);
const survivors = outcomes.filter((outcome) => outcome.verdict !== 'killed');
if (survivors.length > 0) {
  console.error(
    `\n${survivors.length} mutation(s) not killed: ${survivors.map((s) => s.name).join(', ')}`,
  );
  process.exit(1);
}
