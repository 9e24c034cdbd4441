/** Everything needed to create the container again from another shell (wipe, a removed container). */
export interface ContainerSpec {
  readonly image: string;
  /** Container name, so a person can `docker kill outbox-dev-kafka` by hand in a workshop. */
  readonly name: string;
  readonly env: Readonly<Record<string, string>>;
  readonly command?: readonly string[];
  /** Fixed host ports: a recreated or restarted container keeps its address. */
  readonly ports: readonly { readonly container: number; readonly host: number }[];
  readonly labels: Readonly<Record<string, string>>;
  /** A user-defined network, created when missing: a cluster's nodes reach each other by name. */
  readonly network?: string;
}
