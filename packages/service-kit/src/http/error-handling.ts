import type { FastifyError, FastifyInstance } from 'fastify';
import { isDatabaseUnavailable } from '../database/database-unavailable.ts';
import { AtCapacity } from './admission/at-capacity.ts';
import { HttpError } from './http-error.ts';
import { sendProblem, type FieldError } from './problem.ts';

type ValidationIssue = NonNullable<FastifyError['validation']>[number];

function fieldError(location: string, issue: ValidationIssue): FieldError {
  const path = issue.instancePath.split('/').filter((part) => part !== '');
  const params: Record<string, unknown> = issue.params;
  const extra = params['additionalProperty'];
  const missing = params['missingProperty'];
  if (typeof extra === 'string') {
    return { field: [...path, extra].join('.'), in: location, reason: 'is not a known field' };
  }
  if (typeof missing === 'string') {
    return { field: [...path, missing].join('.'), in: location, reason: 'is required' };
  }
  return { field: path.join('.') || location, in: location, reason: issue.message ?? 'is invalid' };
}

const titles: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  503: 'Service Unavailable',
};

/**
 * The one error handler: every error becomes `application/problem+json`. 4xx bodies say what
 * was wrong; an unreachable database is a 503 with Retry-After; anything else is a 500 whose
 * body says nothing internal (the log has the details and the request id).
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler<FastifyError | HttpError>((error, request, reply) => {
    if (error instanceof AtCapacity) reply.header('retry-after', String(error.retryAfterSeconds));
    if (error instanceof HttpError) {
      return sendProblem(reply, {
        title: titles[error.status] ?? 'Client Error',
        status: error.status,
        detail: error.message,
        ...(error.errors ? { errors: error.errors } : {}),
      });
    }
    if (error.validation) {
      const location = error.validationContext ?? 'request';
      const errors = error.validation.map((issue) => fieldError(location, issue));
      return sendProblem(reply, {
        title: 'Bad Request',
        status: 400,
        detail: errors.map((e) => `${e.field} ${e.reason}`).join('; '),
        errors,
      });
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unavailable');
      reply.header('retry-after', '5');
      return sendProblem(reply, {
        title: 'Service Unavailable',
        status: 503,
        detail: 'the database is not reachable; retry later',
      });
    }
    const status = error.statusCode ?? 500;
    // Fastify's own 4xx errors (bad JSON, wrong content type, body too large) are safe to show.
    if (status >= 400 && status < 500) {
      return sendProblem(reply, {
        title: titles[status] ?? 'Client Error',
        status,
        detail: error.message,
      });
    }
    request.log.error({ err: error }, 'request failed');
    return sendProblem(reply, {
      title: 'Internal Server Error',
      status: 500,
      detail: `the request failed; quote request id ${request.id} when reporting it`,
    });
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, {
      title: 'Not Found',
      status: 404,
      detail: `no route ${request.method} ${request.url.split('?')[0] ?? ''}`,
    }),
  );
}
