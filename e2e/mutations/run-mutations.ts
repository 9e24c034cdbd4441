#!/usr/bin/env node
/**
 * `pnpm test:mutations`: applies each mutation of catalog.ts to a copy of the working tree,
 * runs the tests that must catch it there, and fails when one survives. The working tree is
 * never touched. Writes e2e/report/mutations.{json,md}.
 *   node e2e/mutations/run-mutations.ts [--only <name>] [--keep]
 */
import { parseArgs } from 'node:util';
import { mutations } from './catalog.ts';
import { writeMutationReport } from './mutation-report.ts';
import { runMutation, type MutationOutcome } from './run-mutation.ts';

const { values } = parseArgs({
  options: { only: { type: 'string' }, keep: { type: 'boolean', default: false } },
});
const selected = values.only ? mutations.filter((m) => m.name === values.only) : mutations;
if (selected.length === 0) {
  console.error(
    `no mutation named ${JSON.stringify(values.only)}; known: ${mutations.map((m) => m.name).join(', ')}`,
  );
  process.exit(2);
}

const outcomes: MutationOutcome[] = [];
for (const mutation of selected) {
  console.log(`\n== mutation ${mutation.name}: ${mutation.breaks}`);
  const outcome = await runMutation(mutation, { keep: values.keep });
  console.log(
    `   ${outcome.verdict} in ${outcome.seconds} s${outcome.caughtBy ? ` by ${outcome.caughtBy}` : ''}`,
  );
  if (outcome.evidence) console.log(`   ${outcome.evidence}`);
  outcomes.push(outcome);
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
