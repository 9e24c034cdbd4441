/** A running worker. `stop()` finishes or rolls back the current unit of work, then closes. */
export interface Worker {
  stop(): Promise<void>;
}
