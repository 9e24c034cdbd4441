import type { FastifyReply, FastifyRequest } from 'fastify';

const LOOPBACK_HOST = /^(127\.0\.0\.1|localhost):\d+$/;

/**
 * Why a request that changes something is refused, or undefined when it may go on. Only the
 * page itself may press the buttons: the Host must be this loopback server (a DNS-rebinding
 * page names another host) and the browser's Origin must be that same host. A request without
 * an Origin (curl, another program) is refused too: the CLI is the tool for those.
 */
export function crossOriginReason(request: FastifyRequest): string | undefined {
  const host = request.headers.host ?? '';
  if (!LOOPBACK_HOST.test(host)) return `host "${host}" is not this dashboard`;
  const origin = request.headers.origin;
  if (origin === undefined) return 'no Origin header: only the dashboard page may do this';
  if (origin !== `http://${host}`) return `origin "${origin}" is not the dashboard's`;
  return undefined;
}

/** A preHandler that answers 403 to requests from anywhere but the page. */
export async function sameOriginOnly(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const reason = crossOriginReason(request);
  if (reason !== undefined) await reply.code(403).send({ error: 'forbidden', reason });
}

/**
 * An onRequest hook for every route: a page on another site that rebinds its DNS name to
 * 127.0.0.1 sends its own name as Host, and must not read the dashboard either.
 */
export async function loopbackHostOnly(
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const host = request.headers.host ?? '';
  if (!LOOPBACK_HOST.test(host)) {
    await reply
      .code(403)
      .send({ error: 'forbidden', reason: `host "${host}" is not this dashboard` });
  }
}
