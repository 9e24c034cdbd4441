import type { Logger } from '../logger.ts';

/**
 * Logs a worker's health only when it changes (healthy → failing → healthy), so a relay
 * retrying every few seconds during a Kafka outage writes two warn/info lines, not thousands
 * (each retry is a debug line).
 */
export class StateLog {
  readonly #logger: Logger;
  readonly #context: object;
  #failing: string | undefined;
  #failures = 0;

  constructor(logger: Logger, context: object) {
    this.#logger = logger;
    this.#context = context;
  }

  get failures(): number {
    return this.#failures;
  }

  failed(what: string, error: unknown): void {
    this.#failures += 1;
    const reason = describe(error);
    if (this.#failing === undefined) {
      this.#logger.warn({ ...this.#context, err: error }, `${what} failing, retrying: ${reason}`);
    } else {
      // Still failing, maybe differently (refused, then timed out): not a state change.
      this.#logger.debug(
        { ...this.#context, attempt: this.#failures },
        `${what} still failing: ${reason}`,
      );
    }
    this.#failing = reason;
  }

  ok(what: string): void {
    if (this.#failing !== undefined) {
      this.#logger.info(
        { ...this.#context, failures: this.#failures },
        `${what} recovered after ${this.#failures} failed attempt(s)`,
      );
    }
    this.#failing = undefined;
    this.#failures = 0;
  }
}

/** The error's class and code, without the volatile text (ports, ids) that would log per retry. */
export function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return `${error.name}${typeof code === 'string' ? ` ${code}` : ''}: ${firstLine(error.message)}`;
  }
  return String(error);
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? '';
}
