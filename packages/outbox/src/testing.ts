/**
 * `@outbox-inbox/outbox/testing`: the hooks each worker calls at its fault-prone moments (after
 * a publish, after a store, before a commit). The resilience suite kills a process there to
 * prove what a crash at that moment leaves behind; a fork's own fault tests can do the same.
 */
export type { RelayHooks, RelayBatchEvent } from './relay/relay-options.ts';
export type { InboxWriterHooks, InboxBatchInfo } from './inbox-writer/writer-options.ts';
export type { InboxProcessorHooks, InboxRowInfo } from './inbox-processor/processor-options.ts';
export type { DedupConsumerHooks } from './dedup-consumer/dedup-options.ts';
