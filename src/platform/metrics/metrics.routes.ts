/**
 * Where the metrics are read. `METRICS_TOKEN` serves `GET /metrics` on the
 * API's port to a bearer of that token (compared in constant time);
 * `METRICS_PORT` serves it on a port of its own in every process, API and
 * worker (and asks for the token too when one is set). Neither: metrics are
 * off (nothing is counted, /metrics is a 404).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ERRORS } from '../errors.ts';
import type { Metrics } from './metrics.ts';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Whether an Authorization header carries the token (hashes compared, so the length leaks nothing either). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer (.+)$/.exec(header ?? '');
  return Boolean(match) && timingSafeEqual(digest(match![1]!), digest(token));
}

/** Counts every answered request by operation (operationId, else the route pattern; never the URL). */
export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(operationOf(request), request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

function operationOf(request: FastifyRequest): string {
  const options = request.routeOptions;
  const operationId = (options.schema as { operationId?: string } | undefined)?.operationId;
  return operationId ?? (options.url ? `${request.method} ${options.url}` : 'unmatched');
}

/** GET /metrics on the API's port, behind the bearer token. */
export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics, token: string): void {
  app.get('/metrics', { schema: { hide: true }, config: { public: true, unlimited: true }, logLevel: 'warn' }, async (request, reply) => {
    if (!bearerMatches(request.headers.authorization, token)) throw ERRORS.unauthenticated('Send the metrics token as "Authorization: Bearer <METRICS_TOKEN>".');
    return reply.header('content-type', metrics.registry.contentType).header('cache-control', 'no-store').send(await metrics.registry.metrics());
  });
}

/** GET /metrics on a port of its own (METRICS_PORT); the token too when one is set. */
export async function startMetricsServer(metrics: Metrics, options: { host: string; port: number; token: string }): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: GET /metrics\n');
      return;
    }
    if (options.token && !bearerMatches(request.headers.authorization, options.token)) {
      response.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('Send the metrics token as "Authorization: Bearer <METRICS_TOKEN>".\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' }).end(text),
      () => response.writeHead(500, { 'content-type': 'text/plain' }).end('The metrics could not be read.\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : options.port,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
