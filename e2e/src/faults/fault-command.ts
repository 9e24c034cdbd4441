import { fileURLToPath } from 'node:url';
import type { RoleProcess } from '@outbox-inbox/launcher';
import { roleCommand, type Command } from '@outbox-inbox/service-kit';
import { faultsOfRole, formatFaultPlan, type FaultPlan } from './fault-plan.ts';

const entryPoint = fileURLToPath(new URL('./role-with-faults.ts', import.meta.url));

/**
 * The command that runs a role process with the plan's kill points of its role armed, or
 * undefined when none apply (the process runs the service's own main program).
 */
export function faultCommand(
  process: RoleProcess,
  plan: FaultPlan,
  logFile: string,
): Command | undefined {
  const faults = faultsOfRole(plan, process.role, process.service.name);
  if (Object.keys(faults).length === 0) return undefined;
  const command = roleCommand(process.service, process.role, [entryPoint, process.service.name]);
  return {
    ...command,
    env: {
      E2E_FAULTS: formatFaultPlan(faults),
      E2E_COMPONENT: process.name,
      E2E_FAULT_LOG: logFile,
    },
  };
}
