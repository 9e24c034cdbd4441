/**
 * Payloads that are valid JSON and pass a tolerant reader's schema (one extra field), but push
 * what handles them to its limits: nesting deeper than JSON.stringify can recurse (it overflows
 * the stack near 4,500 levels; JSON.parse takes any depth), a value of megabytes, very many
 * keys. `storable` says whether PostgreSQL's jsonb takes it: its parser recurses too, under
 * `max_stack_depth` (2MB by default: some 10,000 levels pass, 100,000 do not). What a receiver
 * cannot store, it must park; either way the next message of the partition must go through.
 */
export interface OversizedPayload {
  readonly name: string;
  /** `base` (a JSON object) with the extra field, as JSON text. */
  readonly json: string;
  readonly storable: boolean;
}

const nestedArrays = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const nestedObjects = (depth: number): string => `${'{"a":'.repeat(depth)}0${'}'.repeat(depth)}`;
const manyKeys = (keys: number): string =>
  `{${Array.from({ length: keys }, (_, i) => `"k${i}":${i}`).join(',')}}`;

/** The corpus, each built on `base`; a topic must take messages of a few MB for it. */
export function oversizedPayloads(base: Readonly<Record<string, unknown>>): OversizedPayload[] {
  const head = JSON.stringify(base).slice(0, -1);
  const withExtra = (extra: string): string =>
    `${head}${head.length > 1 ? ',' : ''}"extra":${extra}}`;
  const payload = (name: string, extra: string, storable: boolean): OversizedPayload => ({
    name,
    json: withExtra(extra),
    storable,
  });
  return [
    payload('arrays nested 5,000 deep', nestedArrays(5_000), true),
    payload('arrays nested 10,000 deep', nestedArrays(10_000), true),
    payload('arrays nested 100,000 deep', nestedArrays(100_000), false),
    payload('objects nested 5,000 deep', nestedObjects(5_000), true),
    payload('objects nested 100,000 deep', nestedObjects(100_000), false),
    payload('a string of 3 MiB', JSON.stringify('x'.repeat(3 * 1024 * 1024)), true),
    payload('100,000 keys', manyKeys(100_000), true),
  ];
}

/** A topic limit that takes the whole corpus in one produce request (the default is 1 MiB). */
export const OVERSIZED_TOPIC_CONFIG = Object.freeze({
  'max.message.bytes': String(16 * 1024 * 1024),
});
