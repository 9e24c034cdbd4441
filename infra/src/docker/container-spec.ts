/** How to build an image that no registry has (Kafka Connect with the project's jars). */
export interface ImageBuild {
  /** The build context, an absolute folder; its Dockerfile is named relative to it. */
  readonly context: string;
  readonly dockerfile: string;
}

/** Everything needed to create the container again from another shell (wipe, a removed container). */
export interface ContainerSpec {
  readonly image: string;
  /** Built from this when no image of that name exists yet; otherwise pulled. */
  readonly build?: ImageBuild;
  /** Container name, so a person can `docker kill outbox-dev-kafka` by hand in a workshop. */
  readonly name: string;
  readonly env: Readonly<Record<string, string>>;
  readonly command?: readonly string[];
  /** Fixed host ports: a recreated or restarted container keeps its address. */
  readonly ports: readonly { readonly container: number; readonly host: number }[];
  readonly labels: Readonly<Record<string, string>>;
  /** A user-defined network, created when missing: a cluster's nodes reach each other by name. */
  readonly network?: string;
  /**
   * On the Docker host's own network, publishing nothing: Kafka Connect, which must reach the
   * addresses the stack's clients use (they register connectors with their own database URL).
   */
  readonly hostNetwork?: boolean;
}
