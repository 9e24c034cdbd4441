import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

export interface ApiDocsOptions {
  /** The service's name, the document's title. */
  readonly title: string;
  readonly description?: string;
}

/** A route as the app declared it, e.g. `{ method: 'GET', url: '/orders/:id' }`. */
export interface DeclaredRoute {
  readonly method: string;
  readonly url: string;
}

const declared = new WeakMap<FastifyInstance, DeclaredRoute[]>();

/**
 * OpenAPI generated from the routes' own schemas, at `/docs/json` (`/docs/yaml`), and a
 * Swagger UI at `/docs`, served from the package's files (no network). Install before the
 * routes: both the document and {@link declaredRoutes} see only routes added afterwards.
 */
export function installApiDocs(app: FastifyInstance, options: ApiDocsOptions): void {
  const routes: DeclaredRoute[] = [];
  declared.set(app, routes);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (method !== 'HEAD' && !route.url.startsWith('/docs'))
        routes.push({ method, url: route.url });
    }
  });
  void app.register(swagger, {
    openapi: {
      info: { title: options.title, description: options.description, version: '1' },
    },
  });
  void app.register(swaggerUi, { routePrefix: '/docs' });
}

/** Every route the app declared after {@link installApiDocs}, the docs' own left out. */
export function declaredRoutes(app: FastifyInstance): readonly DeclaredRoute[] {
  return declared.get(app) ?? [];
}

/**
 * The declared routes the OpenAPI document leaves out (a route with `schema.hide`, or one
 * added before {@link installApiDocs}). Empty when the docs cover the whole API.
 */
export function undocumentedRoutes(app: FastifyInstance): DeclaredRoute[] {
  const document = app.swagger() as { paths?: Record<string, Record<string, unknown>> };
  return declaredRoutes(app).filter((route) => {
    // OpenAPI writes `/orders/:id` as `/orders/{id}`.
    const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    return document.paths?.[path]?.[route.method.toLowerCase()] === undefined;
  });
}
