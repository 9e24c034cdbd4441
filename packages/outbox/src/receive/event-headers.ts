import type { MessageHeaders } from '../kafka-port/kafka-client.ts';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The bytes as text, or undefined when they are not valid UTF-8. Decoding leniently would
 * replace bad bytes with U+FFFD, and the event would be stored, silently, with data it never had.
 */
export function decodeUtf8(bytes: Buffer): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Received header values are Buffers (a string only on the producing side), an array of them
 * when a name repeats, or null (a header without a value). Keeps the last value of each name
 * as text; a value that is not valid UTF-8 is a reason to park the message.
 */
export function decodeHeaders(
  headers: MessageHeaders | undefined,
): { readonly headers: Record<string, string> } | { readonly reason: string } {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const last =
      typeof value === 'string' || Buffer.isBuffer(value) || value == null
        ? value
        : value[value.length - 1];
    if (last === undefined || last === null) continue;
    const text = typeof last === 'string' ? last : decodeUtf8(last);
    if (text === undefined) return { reason: `header ${name} is not valid UTF-8` };
    result[name] = text;
  }
  return { headers: result };
}
