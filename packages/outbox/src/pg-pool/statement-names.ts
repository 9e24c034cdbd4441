/** How many distinct texts are counted at most, so one-off texts cannot grow the map forever. */
const COUNTED_TEXTS_LIMIT = 2_000;

/**
 * Which statement texts a process sends often enough to have PostgreSQL keep them prepared,
 * and under which name. A text gets a name on its `threshold`-th execution, and at most
 * `capacity` texts hold one at a time: a text seen once or twice (a VALUES list whose length
 * varies) stays unnamed, and each connection's server memory stays bounded.
 */
export class StatementNames {
  readonly #threshold: number;
  readonly #capacity: number;
  readonly #executions = new Map<string, number>();
  readonly #names = new Map<string, string>();
  #issued = 0;

  constructor(options: { readonly threshold: number; readonly capacity: number }) {
    this.#threshold = options.threshold;
    this.#capacity = options.capacity;
  }

  /** The name to prepare `text` under, or undefined to send it unnamed this time. */
  nameFor(text: string): string | undefined {
    const named = this.#names.get(text);
    if (named !== undefined) return named;
    if (this.#names.size >= this.#capacity) return undefined;
    const executions = (this.#executions.get(text) ?? 0) + 1;
    if (executions < this.#threshold) {
      if (this.#executions.has(text) || this.#executions.size < COUNTED_TEXTS_LIMIT) {
        this.#executions.set(text, executions);
      }
      return undefined;
    }
    this.#executions.delete(text);
    // Names are never reused: a connection that prepared a retired name keeps its old text.
    this.#issued += 1;
    const name = `outbox_inbox_${this.#issued}`;
    this.#names.set(text, name);
    return name;
  }

  /**
   * Forgets a name whose prepared statement PostgreSQL can no longer run (a migration changed
   * the columns it returns): the text is counted afresh and prepared under a new name.
   */
  retire(text: string, name: string): void {
    if (this.#names.get(text) === name) this.#names.delete(text);
  }
}
