/**
 * A wait that ends early when `wake()` is called. A wake that arrives while nobody waits is
 * remembered, so a NOTIFY received mid-batch makes the next wait return at once.
 */
export class Wakeup {
  #pending = false;
  #resolve: (() => void) | undefined;

  wake(): void {
    this.#pending = true;
    this.#resolve?.();
  }

  async wait(ms: number): Promise<void> {
    if (!this.#pending) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, ms);
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.#resolve = done;
      });
      this.#resolve = undefined;
    }
    this.#pending = false;
  }
}
