import type { EnvReader } from './env-reader.ts';

/** One variable a service reads at start-up. */
export interface EnvVariable {
  readonly name: string;
  /** The value it takes when unset, as it would be written; undefined when it has none. */
  readonly default: string | undefined;
  /** Start-up fails without it. */
  readonly required: boolean;
}

/**
 * The variables a configuration reader reads, in the order it reads them, with their defaults.
 * The reader runs once against a recorder that answers every read with its default (or a
 * stand-in for a required value), so the list is taken from the parsing code and cannot drift
 * from it.
 */
export function describeEnv(readConfig: (read: EnvReader) => unknown): readonly EnvVariable[] {
  const seen = new Map<string, EnvVariable>();
  const note = (name: string, fallback: string | undefined, required: boolean): void => {
    if (!seen.has(name)) seen.set(name, Object.freeze({ name, default: fallback, required }));
  };
  const recorder: EnvReader = {
    string(name, fallback) {
      note(name, fallback, fallback === undefined);
      return fallback ?? '';
    },
    integer(name, rule = {}) {
      note(name, rule.default?.toString(), rule.default === undefined);
      return rule.default ?? rule.min ?? 0;
    },
    optionalInteger(name) {
      note(name, undefined, false);
      return undefined;
    },
    list(name, fallback) {
      note(name, fallback?.join(','), fallback === undefined);
      return [...(fallback ?? [])];
    },
    url(name, protocols, fallback) {
      note(name, fallback, fallback === undefined);
      return fallback ?? `${protocols[0] ?? 'stand-in'}://stand-in`;
    },
    optionalUrl(name) {
      note(name, undefined, false);
      return undefined;
    },
    oneOf(name, _allowed, fallback) {
      note(name, fallback, false);
      return fallback;
    },
  };
  readConfig(recorder);
  return Object.freeze([...seen.values()]);
}
