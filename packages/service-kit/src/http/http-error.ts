import type { FieldError } from './problem.ts';

/**
 * An error a route throws to answer with a 4xx: its message is shown to the client, so it says
 * what was wrong with the request and nothing about the server.
 */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly errors: readonly FieldError[] | undefined;

  constructor(
    status: number,
    code: string,
    message: string,
    options: { errors?: readonly FieldError[]; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'HttpError';
    this.status = status;
    this.code = code;
    this.errors = options.errors;
  }
}

export function notFound(what: string, id: string): HttpError {
  return new HttpError(404, 'NOT_FOUND', `${what} ${id} does not exist`);
}
