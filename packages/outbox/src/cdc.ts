/**
 * `@outbox-inbox/outbox/cdc`: the CDC relay (Debezium on Kafka Connect), in place of the
 * polling relay: register or remove a database's connector, and the worker that watches it.
 */
export { registerCdcRelay, removeCdcRelay, type CdcRelayDeps } from './cdc/cdc-relay.ts';
export { startCdcRelay, type CdcRelayWorkerDeps } from './cdc/start-cdc-relay.ts';
export type { CdcConnectorSpec } from './cdc/cdc-connector-config.ts';
export { ConnectApi, isConnectorRunning, type ConnectorStatus } from './cdc/connect-api.ts';
