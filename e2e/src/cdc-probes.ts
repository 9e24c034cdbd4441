import { metricTotal, scrapeMetrics } from './role-probes.ts';
import type { System, SystemProcess } from './system.ts';

/** The relay role process of a service: in CDC mode, the watch of its connector. */
export function relayOf(system: System, service: 'order' | 'payment'): SystemProcess {
  const found = system.roles.find((role) => role.name === `${service}-relay`);
  if (found === undefined) throw new Error(`no ${service}-relay process`);
  return found;
}

/** What the CDC relay's watch exports: the connector's state and its slot's lag. */
export interface CdcSignals {
  readonly running: number;
  readonly lagSeconds: number;
  readonly lagBytes: number;
}

/** Undefined while the relay role does not answer. */
export async function readCdcSignals(relay: SystemProcess): Promise<CdcSignals | undefined> {
  const text = await scrapeMetrics(relay);
  if (text === undefined) return undefined;
  return {
    running: metricTotal(text, 'outbox_cdc_connector_running'),
    lagSeconds: metricTotal(text, 'outbox_cdc_slot_lag_seconds'),
    lagBytes: metricTotal(text, 'outbox_cdc_slot_lag_bytes'),
  };
}
