#!/usr/bin/env node
/**
 * A role process with injected faults, run by the suite in place of a service's main program:
 * `node src/faults/role-with-faults.ts <service> --roles <role>`. E2E_FAULTS names the kill
 * points and their chances (`relay-after-publish=0.1`), E2E_COMPONENT the process's component
 * and E2E_FAULT_LOG where each self-kill is recorded before it happens. The service runs as
 * its main program runs it, with the library hooks of those kill points.
 */
import { services } from '@outbox-inbox/launcher';
import { runServiceMain } from '@outbox-inbox/service-kit';
import { readProcessCounters } from '../process-counters.ts';
import { faultHooks } from './fault-hooks.ts';
import { parseFaultPlan } from './fault-plan.ts';

const [name = '', ...argv] = process.argv.slice(2);
const service = services.find((candidate) => candidate.name === name);
if (service === undefined) {
  const known = services.map((candidate) => candidate.name).join(', ');
  console.error(`error: no service named "${name}"; known: ${known}`);
  process.exit(1);
}
// The api role serves its metrics on PORT, every other role on OPS_PORT (as the service kit does).
const metricsPort = Number(process.env['OPS_PORT'] ?? process.env['PORT']);
const hooks = faultHooks(parseFaultPlan(process.env['E2E_FAULTS']), {
  component: process.env['E2E_COMPONENT'] ?? name,
  logFile: process.env['E2E_FAULT_LOG'],
  lastCounters: () => readProcessCounters(metricsPort, 500).catch(() => undefined),
});
await runServiceMain(service, { argv, env: process.env, hooks });
