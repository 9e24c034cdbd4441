#!/usr/bin/env node
/**
 * `pnpm bench` (full) or `pnpm bench -- --quick` (smoke sizes): starts its own PostgreSQL +
 * Kafka stack (and a three-node cluster for B1c), runs B1–B10 (see README.md; B8 adds Kafka Connect to the stack), prints the
 * tables and writes docs/benchmarks.md (other runs write under bench/report/). Every comparison is measured side by side in this
 * run; nothing here asserts an absolute time.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Stack, findRepoRoot } from '@outbox-inbox/infra';
import type { BenchContext, Scenario } from './context.ts';
import { benchDb } from './database.ts';
import { benchKafka } from './kafka.ts';
import { describeMachine, type Machine } from './machine.ts';
import { targetsTable, textTable, type Section } from './report.ts';
import { renderReport, reportFile } from './report-file.ts';
import { capacity } from './scenarios/capacity/capacity.ts';
import { clusterDrain } from './scenarios/relay-drain/cluster-drain.ts';
import { inbox } from './scenarios/inbox/inbox.ts';
import { latency } from './scenarios/latency/latency.ts';
import { memory } from './scenarios/memory/memory.ts';
import { ordinaryRates } from './scenarios/ordinary-rates/ordinary-rates.ts';
import { relayDrain } from './scenarios/relay-drain/relay-drain.ts';
import { relayModes } from './scenarios/relay-modes/relay-modes.ts';
import { relayScaling } from './scenarios/relay-scaling/relay-scaling.ts';
import { roundTrips } from './scenarios/round-trips/round-trips.ts';
import { writeOverhead } from './scenarios/write-overhead/write-overhead.ts';
import { parseSettings } from './settings.ts';

const scenarios: readonly Scenario[] = [
  relayDrain,
  clusterDrain,
  relayScaling,
  latency,
  writeOverhead,
  inbox,
  memory,
  capacity,
  relayModes,
  ordinaryRates,
  roundTrips,
];

const { settings, only } = parseSettings(process.argv.slice(2), process.env);
const unknown = [...(only ?? [])].filter(
  (name) => !scenarios.some((scenario) => scenario.id.toUpperCase() === name),
);
if (unknown.length > 0) {
  console.error(
    `error: --only names no scenario ${unknown.join(', ')}; known: ${scenarios.map((s) => s.id).join(', ')}`,
  );
  process.exit(2);
}
const root = findRepoRoot();
const began = performance.now();
const log = (message: string) =>
  console.log(
    `[bench ${((performance.now() - began) / 1000).toFixed(0).padStart(4)} s] ${message}`,
  );

/** Runs the chosen scenarios one after another, printing each section as it is done. */
async function runScenarios(ctx: BenchContext): Promise<Section[]> {
  const sections: Section[] = [];
  for (const scenario of scenarios) {
    if (only && !only.has(scenario.id.toUpperCase())) continue;
    if (scenario.id === 'B6' && settings.memoryEvents === 0) {
      log('B6 skipped in quick mode (it needs a 1M-event backlog)');
      continue;
    }
    log(`${scenario.id} started`);
    const section = await scenario.run(ctx);
    sections.push(section);
    console.log(`\n${section.id} ${section.title}`);
    for (const table of section.tables) console.log(`${textTable(table)}\n`);
  }
  return sections;
}

process.env['KAFKAJS_NO_PARTITIONER_WARNING'] = '1';
// A durable PostgreSQL: the services' numbers with the crash safety they ship with.
const stack = await Stack.up({ name: `bench-${process.pid}`, kafkaHeapMb: 1024, durable: true });
// Ctrl-C still brings the servers and role processes down.
const interrupted = () => void stack.down().finally(() => process.exit(130));
process.once('SIGINT', interrupted);
process.once('SIGTERM', interrupted);

let sections: Section[] = [];
let machine: Machine | undefined;
try {
  const admin = benchDb<unknown>(stack.postgresUrl('postgres'), 1);
  machine = await describeMachine(stack, admin);
  await admin.destroy();
  log(`${settings.mode} run on ${machine.cpus}, ${machine.memory}; stack ${stack.name}`);
  sections = await runScenarios({ stack, kafka: benchKafka(stack.kafkaBrokers), settings, log });
} finally {
  await stack.down();
}

const minutes = (performance.now() - began) / 60_000;
const targets = sections.flatMap((s) => s.targets);
if (targets.length > 0) console.log(`Targets\n${textTable(targetsTable(targets))}\n`);
if (machine) {
  const target = reportFile(root, settings, only);
  const analysis =
    settings.mode === 'full'
      ? readFileSync(path.join(root, 'bench', 'analysis.md'), 'utf8').trim()
      : '';
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, renderReport({ machine, settings, sections, minutes, analysis }));
  log(`wrote ${path.relative(root, target)} (${minutes.toFixed(1)} min)`);
}
