import type { FastifyInstance } from 'fastify';
import { HttpError } from './http-error.ts';
import type { FieldError } from './problem.ts';

const NUL_REASON = 'contains U+0000 (NUL), which PostgreSQL cannot store in text';
const SURROGATE_REASON =
  'contains a lone UTF-16 surrogate, which is not Unicode (PostgreSQL would store U+FFFD instead)';

/** Why PostgreSQL cannot store `text` as it is, or undefined when it can. */
function unstorable(text: string): string | undefined {
  if (text.includes('\u0000')) return NUL_REASON;
  if (!text.isWellFormed()) return SURROGATE_REASON;
  return undefined;
}

/** Every string (value or key) under `value` that PostgreSQL cannot store, by path. */
function findUnstorable(value: unknown, path: readonly string[], location: string): FieldError[] {
  const at = (parts: readonly string[]): string => parts.join('.') || location;
  if (typeof value === 'string') {
    const reason = unstorable(value);
    return reason === undefined ? [] : [{ field: at(path), in: location, reason }];
  }
  if (typeof value !== 'object' || value === null) return [];
  const errors: FieldError[] = [];
  for (const [key, item] of Object.entries(value)) {
    const keyReason = unstorable(key);
    if (keyReason !== undefined) {
      // The name itself is shown escaped: it is what is wrong.
      const shown = JSON.stringify(key).slice(1, -1);
      errors.push({ field: at([...path, shown]), in: location, reason: `name ${keyReason}` });
      continue;
    }
    errors.push(...findUnstorable(item, [...path, key], location));
  }
  return errors;
}

/**
 * Refuses, with a 400 naming each field, any request whose body, query, path parameters or
 * headers hold a string PostgreSQL cannot store: a NUL (PostgreSQL refuses it, which used to be
 * a 500) or a lone surrogate (pg would silently store U+FFFD, a value the client never sent).
 * Runs before validation, for every route of the app, so no route has to remember it.
 */
export function refuseUnstorableText(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const errors = [
      ...findUnstorable(request.params, [], 'params'),
      ...findUnstorable(request.query, [], 'querystring'),
      ...findUnstorable(request.headers, [], 'headers'),
      ...findUnstorable(request.body, [], 'body'),
    ];
    if (errors.length > 0) {
      throw new HttpError(
        400,
        'UNSTORABLE_TEXT',
        errors.map((e) => `${e.field} ${e.reason}`).join('; '),
        {
          errors,
        },
      );
    }
  });
}
