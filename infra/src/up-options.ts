export type ServerName = 'postgres' | 'kafka' | 'connect';

export interface UpOptions {
  /** Stacks are named so that several can run side by side; `dev` is the CLI's default. */
  readonly name?: string;
  readonly servers?: readonly ServerName[];
  /** A detached stack outlives this process (CLI `up --detach`); otherwise this process owns it. */
  readonly detached?: boolean;
  /** Fixed ports (the dev stack); free ports are picked when absent. */
  readonly ports?: {
    readonly postgres?: number;
    readonly kafka?: number;
    readonly kafkaController?: number;
    /** Kafka Connect's REST API. */
    readonly connect?: number;
  };
  /** Heap of each Kafka JVM; 512 MiB for one broker, 384 MiB per node of a cluster. */
  readonly kafkaHeapMb?: number;
  /**
   * Kafka nodes (combined broker + controller), named `kafka-1` … when more than one; else
   * STACK_KAFKA_BROKERS, else one (`kafka`). A stack that exists keeps its nodes.
   */
  readonly kafkaBrokers?: number;
  /**
   * PostgreSQL with `fsync` and `full_page_writes` on, as a production server runs: for
   * benchmarks. Off by default, for tests (see postgresServerSettings).
   */
  readonly durable?: boolean;
  readonly env?: NodeJS.ProcessEnv;
}
