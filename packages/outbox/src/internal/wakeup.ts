/**
 * A wait that ends early when `wake()` is called; every current waiter wakes. A wake that
 * arrives while nobody waits is remembered, so a NOTIFY received mid-batch makes the next
 * wait return at once.
 */
export class Wakeup {
  #pending = false;
  readonly #waiters = new Set<() => void>();

  wake(): void {
    if (this.#waiters.size === 0) this.#pending = true;
    for (const resolve of this.#waiters) resolve();
  }

  /** Wakes only the longest waiter; remembered, like `wake()`, when nobody waits. */
  wakeOne(): void {
    const longest = this.#waiters.values().next();
    if (longest.done === true) this.#pending = true;
    else longest.value();
  }

  /** Until woken, or `ms` have passed (without `ms`: until woken). */
  async wait(ms?: number): Promise<void> {
    if (this.#pending) {
      this.#pending = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = ms === undefined ? undefined : setTimeout(done, ms);
      this.#waiters.add(done);
    });
  }
}
