export { Stack } from './stack.ts';
export type { ComponentStatus, ProcessComponent, ServerName, UpOptions } from './stack.ts';
export type { ProviderName } from './choose-provider.ts';
export { InfraError } from './errors.ts';
export type { InfraErrorCode } from './errors.ts';
export { pollUntil } from './poll.ts';
export { findFreePort } from './ports.ts';
export { findRepoRoot, stacksHome } from './state-file.ts';
export type { Readiness, StackState, ComponentRecord } from './state-file.ts';
