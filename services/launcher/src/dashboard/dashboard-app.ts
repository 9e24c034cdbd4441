import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import type { Stack } from '@outbox-inbox/infra';
import Fastify, { type FastifyInstance } from 'fastify';
import type { LoadGenerator } from './load-generator.ts';
import { loopbackHostOnly, sameOriginOnly } from './same-origin.ts';
import type { DashboardState } from './system-sampler.ts';

export interface DashboardDeps {
  readonly stack: Stack;
  readonly load: LoadGenerator;
  /** The last state the sampler produced (undefined before its first round). */
  readonly state: () => DashboardState | undefined;
  /** Registers a listener for every new state; returns its removal. */
  readonly subscribe: (listener: (state: DashboardState) => void) => () => void;
}

const pageFiles: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/dashboard.js': { file: 'dashboard.js', type: 'text/javascript; charset=utf-8' },
  '/dashboard.css': { file: 'dashboard.css', type: 'text/css; charset=utf-8' },
};

const componentActions = ['kill', 'start', 'stop'] as const;
type ComponentAction = (typeof componentActions)[number];

/**
 * The dashboard's HTTP side: the page, its state as server-sent events, and the buttons
 * (component kill/start/stop through the stack's own controls, the order load).
 */
export function buildDashboardApp(deps: DashboardDeps): FastifyInstance {
  const app = Fastify({ logger: false });
  app.addHook('onRequest', loopbackHostOnly);
  for (const [url, { file, type }] of Object.entries(pageFiles)) {
    const body = readFileSync(new URL(`./page/${file}`, import.meta.url), 'utf8');
    app.get(url, async (_request, reply) =>
      reply.type(type).header('cache-control', 'no-store').send(body),
    );
  }

  app.get('/api/state', async () => ({ ...deps.state(), load: deps.load.status }));

  app.get('/api/events', (request, reply) => {
    reply.hijack();
    const out = reply.raw;
    out.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    const current = deps.state();
    if (current !== undefined) send(out, current, deps.load);
    const unsubscribe = deps.subscribe((state) => send(out, state, deps.load));
    request.raw.on('close', unsubscribe);
  });

  registerComponentControls(app, deps.stack);
  registerLoadControl(app, deps.load);
  return app;
}

/** Kill, start or stop a component, through the stack's own controls (what the CLI uses). */
function registerComponentControls(app: FastifyInstance, stack: Stack): void {
  app.post<{ Params: { name: string; action: string } }>(
    '/api/components/:name/:action',
    { preHandler: sameOriginOnly },
    async (request, reply) => {
      const { name, action } = request.params;
      if (!isAction(action)) {
        return reply
          .code(400)
          .send({ error: `action must be one of ${componentActions.join(', ')}` });
      }
      if (!stack.status().some((c) => c.name === name)) {
        return reply.code(404).send({ error: `no component named "${name}"` });
      }
      try {
        await stack[action](name);
      } catch (error) {
        return reply
          .code(409)
          .send({ error: error instanceof Error ? error.message : String(error) });
      }
      return { name, running: stack.isRunning(name) };
    },
  );
}

/** Start (at a rate) or stop (rate 0) the stream of orders. */
function registerLoadControl(app: FastifyInstance, load: LoadGenerator): void {
  app.post<{ Body: { ordersPerSecond: number } }>(
    '/api/load',
    {
      preHandler: sameOriginOnly,
      schema: {
        body: {
          type: 'object',
          required: ['ordersPerSecond'],
          additionalProperties: false,
          properties: { ordersPerSecond: { type: 'number', minimum: 0, maximum: 200 } },
        },
      },
    },
    async (request) => {
      const { ordersPerSecond } = request.body;
      if (ordersPerSecond === 0) load.stop();
      else load.start(ordersPerSecond);
      return load.status;
    },
  );
}

function isAction(action: string): action is ComponentAction {
  return (componentActions as readonly string[]).includes(action);
}

function send(out: ServerResponse, state: DashboardState, load: LoadGenerator): void {
  out.write(`data: ${JSON.stringify({ ...state, load: load.status })}\n\n`);
}
