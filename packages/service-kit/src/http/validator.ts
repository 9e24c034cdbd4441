import { Ajv } from 'ajv';
import type { FastifyInstance } from 'fastify';
import { refuseUnstorableText } from './unstorable-text.ts';

const common = {
  allErrors: true,
  removeAdditional: false,
  useDefaults: true,
  strict: false,
} as const;

/**
 * Fastify's default validator strips unknown fields and coerces body types ("12" becomes 12).
 * A careful API refuses both in the body; path and query strings are text, so they are coerced.
 * Strings PostgreSQL cannot store (a NUL, a lone surrogate) are refused before validation.
 */
export function installStrictValidation(app: FastifyInstance): void {
  // The API speaks JSON only: without fastify's text/plain parser, other types get a 415.
  app.removeContentTypeParser('text/plain');
  const body = new Ajv({ ...common, coerceTypes: false });
  const text = new Ajv({ ...common, coerceTypes: 'array' });
  refuseUnstorableText(app);
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? body : text).compile(schema),
  );
}
