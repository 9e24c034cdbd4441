import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { AtCapacity, type Refusal, type RequestDeadlines } from './at-capacity.ts';
import {
  defaultAnswerWithinMs,
  RequestAdmission,
  type AdmissionOptions,
} from './request-admission.ts';

/** How long after its last refusal the api's readiness still says it is refusing work. */
const REFUSING_SHOWN_FOR_MS = 10_000;

/** What /health/ready reads: whether the api refused work lately. */
export interface AdmissionState {
  /** Refusals within the last {@link REFUSING_SHOWN_FOR_MS}; 0 when none. */
  recentRefusals(): number;
  readonly options: AdmissionOptions;
}

const requestDeadlines = new WeakMap<FastifyRequest, RequestDeadlines>();

/**
 * The deadlines of a request the admission let in (none for a route outside it): a handler that
 * waits again before its work begins refuses the request once its start deadline has passed,
 * and one that can still roll its work back refuses it near its answer deadline.
 */
export function deadlinesOf(request: FastifyRequest): RequestDeadlines | undefined {
  return requestDeadlines.get(request);
}

function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  // The response closes before it finished only when the client's connection went away.
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

function admissionMetrics(registry: Registry, admission: RequestAdmission) {
  return {
    refused: new Counter({
      name: 'http_requests_refused_total',
      help: 'Requests refused before their work started: wait-exceeded (503, every slot busy for longer than the admission wait), queue-full (503 at once, as many already waiting as allowed), client-gone (the client left while it waited), start-deadline (503, admitted, but its work waited in the handler until the admission wait had passed) or answer-deadline (503, its work started but could not commit within the answer bound, and was rolled back)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    wait: new Histogram({
      name: 'http_admission_wait_seconds',
      help: 'Time from a request’s arrival until its handler could start (admitted requests)',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers: [registry],
    }),
    inFlight: new Gauge({
      name: 'http_requests_in_flight',
      help: 'Requests running their handler now (at most the admission limit)',
      registers: [registry],
      collect() {
        this.set(admission.inFlight);
      },
    }),
    waiting: new Gauge({
      name: 'http_requests_waiting',
      help: 'Requests waiting for an admission slot now',
      registers: [registry],
      collect() {
        this.set(admission.waiting);
      },
    }),
  };
}

/** An admission with its metrics; {@link AdmissionGate.guard} puts routes behind it. */
export interface AdmissionGate extends AdmissionState {
  /**
   * Puts every route registered in `app`'s scope after this call behind the admission.
   */
  guard(app: FastifyInstance): void;
}

/**
 * A {@link RequestAdmission} for an api's routes:
 * the handler runs only with a slot, and holds it until it returns, whether or not the client
 * is still there. A request that gets no slot within the wait is answered 503 with
 * `Retry-After`; one whose client left while it waited is dropped, so no work is committed for
 * a request nobody waits for. A handler that queues its work again learns the same bound from
 * {@link deadlinesOf}, and its `AtCapacity` refusals are counted here by their reason.
 * Validation runs before, so a bad request never queues.
 */
export function createAdmissionGate(options: AdmissionOptions, registry: Registry): AdmissionGate {
  const admission = new RequestAdmission(options);
  const metrics = admissionMetrics(registry, admission);
  const refusedAt: number[] = [];
  const recentRefusals = (): number => {
    const since = Date.now() - REFUSING_SHOWN_FOR_MS;
    while (refusedAt.length > 0 && (refusedAt[0] ?? 0) < since) refusedAt.shift();
    return refusedAt.length;
  };

  const refused = (reason: Refusal): void => {
    metrics.refused.inc({ reason });
    refusedAt.push(Date.now());
    recentRefusals();
  };

  const guard = (app: FastifyInstance): void => {
    app.addHook('onRoute', (route) => {
      const handler: RouteHandlerMethod = route.handler;
      route.handler = async function admitted(request, reply) {
        let release: () => void;
        try {
          release = await admission.acquire({
            waitedMs: reply.elapsedTime,
            gone: clientGone(reply),
          });
        } catch (refusal) {
          const reason = refusal as Refusal;
          refused(reason);
          throw new AtCapacity(reason, options.retryAfterSeconds);
        }
        metrics.wait.observe(reply.elapsedTime / 1000);
        const arrived = performance.now() - reply.elapsedTime;
        requestDeadlines.set(request, {
          startBy: arrived + options.maxWaitMs,
          answerBy: arrived + (options.answerWithinMs ?? defaultAnswerWithinMs),
          refuse: (reason) => new AtCapacity(reason, options.retryAfterSeconds),
        });
        try {
          return await handler.call(this, request, reply);
        } catch (error) {
          if (error instanceof AtCapacity) refused(error.reason);
          throw error;
        } finally {
          release();
        }
      };
    });
  };
  return { recentRefusals, options: admission.options, guard };
}
