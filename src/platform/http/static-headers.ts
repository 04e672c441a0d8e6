/**
 * Headers every response carries, set in one synchronous onRequest hook:
 * helmet's security headers and the request id. Helmet decides the headers
 * (its own defaults and our options), but it is run once at start-up against
 * a recording response instead of once per request: with the CSP off (the
 * reader sets its own) nothing it sends depends on the request, and running
 * its eleven middlewares per request was about 4% of an authenticated read's
 * CPU (bench:api profile).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

/** The headers helmet sets for these options, by lower-case name. */
export function helmetHeaders(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader(name: string, value: unknown) { headers[name.toLowerCase()] = String(value); },
    removeHeader(name: string) { delete headers[name.toLowerCase()]; },
  };
  let finished = false;
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
    finished = true;
  });
  if (!finished) throw new Error('helmet did not set its headers synchronously');
  return headers;
}

export function registerStaticHeaders(app: FastifyInstance, options: HelmetOptions): void {
  const entries = Object.entries(helmetHeaders(options));
  app.addHook('onRequest', (request, reply, done) => {
    for (const [name, value] of entries) reply.header(name, value);
    reply.header('x-request-id', request.id);
    done();
  });
}
