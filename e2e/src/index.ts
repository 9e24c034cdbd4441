// What the suite lends to others (the workshop's helper): its view of a topic and the
// forbidden writers it shows failing. The suite itself is run with vitest, not imported.
export { readWholeTopic } from './topic-reader.ts';
export type { TopicMessage } from './topic-reader.ts';
export {
  createOrderSendingAfterCommit,
  createOrderSendingInsideTransaction,
  naiveSchema,
  naiveTopic,
} from './anti-patterns/naive-order-writer.ts';
export type { NaiveWriterDeps } from './anti-patterns/naive-order-writer.ts';
