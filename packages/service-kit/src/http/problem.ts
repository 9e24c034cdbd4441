import type { FastifyReply } from 'fastify';

/** One field that failed validation: where, and why. */
export interface FieldError {
  readonly field: string;
  /** `body`, `querystring`, `params` or `headers`. */
  readonly in?: string;
  readonly reason: string;
}

/** RFC 9457 problem details, the body of every error response. */
export interface Problem {
  readonly type?: string;
  readonly title: string;
  readonly status: number;
  readonly detail?: string;
  readonly errors?: readonly FieldError[];
}

/** Sends an `application/problem+json` response. */
export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  return reply
    .code(problem.status)
    .type('application/problem+json')
    .send({ type: problem.type ?? 'about:blank', ...problem, instance: reply.request.url });
}
