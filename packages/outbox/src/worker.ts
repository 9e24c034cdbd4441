/** A running worker. `stop()` finishes or rolls back the current unit of work, then closes. */
export interface Worker {
  stop(): Promise<void>;
}

/** What a worker (or one unit of it: a partition, a processor loop) tells the watch. */
export interface ProgressReporter {
  /**
   * Whether work is waiting. The stall clock starts when work appears, or `waitingForMs`
   * before now when the worker knows how long it has waited (the age of a held row).
   */
  hasWork(hasWork: boolean, waitingForMs?: number): void;
  /** A unit of work was done: the stall clock starts again. */
  progressed(): void;
  /** Why the last try failed; shown with a stall. */
  failed(error: unknown): void;
  /**
   * Asks `probe` whether work is waiting, in the background and at most once per probe
   * interval; a failed probe changes nothing. For a worker that cannot tell from its own loop
   * (a relay that published nothing: no rows, or rows it cannot move?). A number is the
   * age of the work waiting (ms), as `hasWork(true, age)`; 0 or false: none.
   */
  checkWork(probe: () => Promise<boolean | number>): void;
}
