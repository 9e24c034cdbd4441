/** Bad configuration: the message names the variable, what it must be and what it was. */
export class ConfigError extends Error {
  readonly code = 'INVALID_CONFIG';
  readonly variable: string;

  constructor(variable: string, message: string) {
    super(`invalid configuration: ${variable} ${message}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

export interface IntegerRule {
  readonly default?: number;
  readonly min?: number;
  readonly max?: number;
}

/**
 * Typed reads of environment variables for a service's `parseConfig(env)`. Each read throws a
 * {@link ConfigError} naming the variable, so start-up fails fast with a message a person can act on.
 */
export interface EnvReader {
  string(name: string, fallback?: string): string;
  integer(name: string, rule?: IntegerRule): number;
  /** Undefined when unset; validated like {@link integer} when set. */
  optionalInteger(name: string, rule?: Omit<IntegerRule, 'default'>): number | undefined;
  list(name: string, fallback?: readonly string[]): string[];
  url(name: string, protocols: readonly string[], fallback?: string): string;
  /** Undefined when unset; validated like {@link url} when set. */
  optionalUrl(name: string, protocols: readonly string[]): string | undefined;
  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T;
}

export function createEnvReader(env: NodeJS.ProcessEnv): EnvReader {
  const raw = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const required = <T>(name: string, fallback: T | undefined): T => {
    if (fallback === undefined) throw new ConfigError(name, 'is required but not set');
    return fallback;
  };
  return {
    string(name, fallback) {
      return raw(name) ?? required(name, fallback);
    },
    integer(name, rule = {}) {
      const value = raw(name);
      if (value === undefined) return required(name, rule.default);
      return parseInteger(name, value, rule);
    },
    optionalInteger(name, rule = {}) {
      return raw(name) === undefined ? undefined : this.integer(name, rule);
    },
    list(name, fallback) {
      const value = raw(name);
      if (value === undefined) return [...required(name, fallback)];
      const items = value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
      if (items.length === 0) throw new ConfigError(name, 'must list at least one value');
      return items;
    },
    url(name, protocols, fallback) {
      const value = raw(name) ?? required(name, fallback);
      checkUrl(name, value, protocols);
      return value;
    },
    optionalUrl(name, protocols) {
      return raw(name) === undefined ? undefined : this.url(name, protocols);
    },
    oneOf(name, allowed, fallback) {
      const value = raw(name);
      if (value === undefined) return fallback;
      const found = allowed.find((candidate) => candidate === value);
      if (found === undefined) {
        throw new ConfigError(name, `must be one of ${allowed.join(', ')} (got "${value}")`);
      }
      return found;
    },
  };
}

/** `value` of variable `name` as an integer within the rule's bounds (any safe integer if none). */
function parseInteger(name: string, value: string, rule: IntegerRule): number {
  const min = rule.min ?? Number.MIN_SAFE_INTEGER;
  const max = rule.max ?? Number.MAX_SAFE_INTEGER;
  const parsed = Number(value);
  if (!/^-?\d+$/.test(value) || parsed < min || parsed > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max} (got "${value}")`);
  }
  return parsed;
}

/** Throws unless `value` of variable `name` is a URL with one of the `protocols`. */
function checkUrl(name: string, value: string, protocols: readonly string[]): void {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(name, 'must be a URL');
  }
  if (!protocols.includes(parsed.protocol.replace(/:$/, ''))) {
    throw new ConfigError(name, `must be a ${protocols.join(' or ')} URL`);
  }
}
