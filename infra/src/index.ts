export { Stack } from './stack.ts';
export type { ComponentStatus, ProcessComponent } from './stack.ts';
export { formatBytes } from './prune.ts';
export type { PrunedStack } from './prune.ts';
export type { ServerName, UpOptions } from './up-options.ts';
export type { PartitionLeader } from './kafka-cluster/partition-leaders.ts';
export type { ProviderName } from './choose-provider.ts';
export { InfraError } from './errors.ts';
export { findJava, resolveKafkaClasspath } from './components/kafka.ts';
export { postgresServerSettings, postgresSettingArgs } from './components/postgres.ts';
export { connectWorkerSettings } from './components/connect.ts';
export type { ConnectWorkerPlace } from './components/connect.ts';
export { connectImageName, connectWorkerEnv } from './docker/connect-image.ts';
export type { InfraErrorCode } from './errors.ts';
export { pollUntil } from './poll.ts';
export { statementCountingPool } from './testing/statement-counting-pool.ts';
export { genericPlanPool, wholeTableReads } from './testing/generic-plan-pool.ts';
export { urlAsLogin } from './login-url.ts';
export { accessMismatches, probeAsLogin } from './testing/login-probe.ts';
export { checkGrantsBlock, readGrants } from './testing/grants-table.ts';
export type { LoginAccessCase, LoginProbe } from './testing/login-probe.ts';
export type { SentStatement } from './testing/statement-counting-pool.ts';
export { untilStopSignal } from './stop-signal.ts';
export { findFreePort } from './ports.ts';
export { devPorts } from './dev-ports.ts';
export { findRepoRoot, stacksHome } from './state-file.ts';
export type { StackState } from './state-file.ts';
export type { Readiness } from './readiness.ts';
export type {
  ComponentRecord,
  ContainerRecord,
  ExternalRecord,
  KafkaRecord,
  PostgresRecord,
  ProcessRecord,
} from './component-record.ts';
