/** A command line the user got wrong: printed with the usage, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** `string`: one value; `strings`: repeatable; `boolean`: a flag. */
export type OptionKind = 'string' | 'strings' | 'boolean';

export interface ParsedArgs {
  readonly strings: ReadonlyMap<string, string>;
  readonly lists: ReadonlyMap<string, readonly string[]>;
  readonly flags: ReadonlySet<string>;
  readonly positionals: readonly string[];
}

/**
 * Parses `args` against the options a subcommand takes. An option that takes a value takes
 * the next argument whatever it looks like (`--topic -weird` is the topic `-weird`), or the
 * part after `=`; `--` ends the options, so a positional may start with `-` too. Anything
 * else that starts with `-` is an unknown option and refused.
 */
export function parseArgs(
  args: readonly string[],
  options: Readonly<Record<string, OptionKind>>,
): ParsedArgs {
  const strings = new Map<string, string>();
  const lists = new Map<string, string[]>();
  const flags = new Set<string>();
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const [name, inline] = splitOption(arg);
    const kind = options[name];
    if (kind === undefined) throw new UsageError(`unknown option --${name}`);
    if (kind === 'boolean') {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value`);
      flags.add(name);
      continue;
    }
    let value = inline;
    if (value === undefined) {
      if (i + 1 >= args.length) throw new UsageError(`--${name} needs a value`);
      value = args[++i] ?? '';
    }
    if (kind === 'strings') lists.set(name, [...(lists.get(name) ?? []), value]);
    else if (strings.has(name)) throw new UsageError(`--${name} given twice`);
    else strings.set(name, value);
  }
  return { strings, lists, flags, positionals };
}

function splitOption(arg: string): [string, string | undefined] {
  const body = arg.replace(/^--?/, '');
  const equals = body.indexOf('=');
  return equals === -1 ? [body, undefined] : [body.slice(0, equals), body.slice(equals + 1)];
}

/** A whole number from `min` up, or a UsageError naming the option. */
export function wholeNumber(name: string, value: string | undefined, min = 1): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || parsed < min || !Number.isSafeInteger(parsed)) {
    throw new UsageError(`--${name} must be a whole number of at least ${min} (got "${value}")`);
  }
  return parsed;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Event ids as positionals: at least one, each a UUID. */
export function eventIds(positionals: readonly string[]): string[] {
  if (positionals.length === 0) throw new UsageError('name at least one event id');
  for (const id of positionals) {
    if (!UUID.test(id)) throw new UsageError(`"${id}" is not an event id (a UUID)`);
  }
  return [...positionals];
}

/** Parked message ids as positionals: at least one, each a row id. */
export function rowIds(positionals: readonly string[]): string[] {
  if (positionals.length === 0) throw new UsageError('name at least one parked message id');
  for (const id of positionals) {
    if (!/^\d{1,18}$/.test(id)) throw new UsageError(`"${id}" is not a parked message id`);
  }
  return [...positionals];
}

const UNITS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s`, `15m`, `12h`, `7d` as milliseconds, or a UsageError naming the option. */
export function duration(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d+)([smhd])$/.exec(value);
  const unit = UNITS[match?.[2] ?? ''];
  if (match === null || unit === undefined) {
    throw new UsageError(`--${name} must be a duration like 90s, 15m, 12h or 7d (got "${value}")`);
  }
  return Number(match[1]) * unit;
}
