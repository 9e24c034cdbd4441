import { runScenario, type ScenarioOptions, type ScenarioResult } from '../scenario.ts';
import { onServiceClients, type ServiceClients } from './kafka-client.ts';

/**
 * Runs a scenario on a three-node Kafka cluster of its own (`inject` takes its nodes down, which
 * the suite's shared servers must not lose), with each service on its client (`clients`).
 */
export function runOnThreeNodeCluster(
  scenario: string,
  clients: ServiceClients,
  inject: ScenarioOptions['inject'],
): Promise<ScenarioResult> {
  const { name, serviceSettings } = onServiceClients(scenario, clients);
  return runScenario(name, {
    system: {
      kafkaBrokers: 3,
      ownServers: 'a three-node cluster whose nodes it stops',
      serviceSettings,
    },
    inject,
  });
}
