/**
 * Mounts oidc-provider (a Koa application) under /oauth and its RFC 8414
 * metadata at /.well-known/oauth-authorization-server. Fastify hands the raw
 * request over untouched (no body parsing in this scope); the guard treats
 * these routes as public (OAuth endpoints authenticate clients themselves and
 * answer RFC 6749 errors).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ClientRateLimiter } from '../../platform/http/client-rate-limit.ts';
import type { OAuthService } from './oauth.service.ts';

export interface OAuthEndpointsOptions {
  oauth: OAuthService;
  limiter: ClientRateLimiter;
  /** OAUTH_PER_CLIENT_PER_MINUTE; 0 disables. */
  perClientPerMinute: number;
}

export async function oauthEndpoints(app: FastifyInstance, { oauth, limiter, perClientPerMinute }: OAuthEndpointsOptions): Promise<void> {
  const callback = oauth.provider.callback();
  // The provider parses its own bodies (form-encoded, JSON for registration).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

  const handOver = async (request: FastifyRequest, reply: FastifyReply, url?: string): Promise<void> => {
    if (perClientPerMinute > 0) {
      const wait = await limiter.hit([{ bucket: 'oauth:client', subject: limiter.clientKey(request.ip), max: perClientPerMinute, windowMs: 60_000 }]);
      if (wait !== null) {
        // An OAuth endpoint answers in RFC 6749's shape, not the /v1 envelope.
        return reply.code(429).header('retry-after', String(wait)).send({ error: 'temporarily_unavailable', error_description: `Too many requests. Retry after ${wait} seconds.` });
      }
    }
    reply.hijack();
    // Headers Fastify's hooks set (rate limits, security headers) go out with the provider's answer.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    if (url) request.raw.url = url;
    callback(request.raw, reply.raw);
  };

  // Counted by their own per-client limit (below), not the unauthenticated API limit.
  const config = { public: true, unlimited: true } as const;
  const hide = { hide: true } as const;

  app.get('/.well-known/oauth-authorization-server', { schema: hide, config }, (request, reply) => handOver(request, reply, '/.well-known/openid-configuration'));
  // The device verification page is the application's (it approves through /v1).
  app.get('/oauth/device', { schema: hide, config: { public: true } }, (request, reply) => {
    const code = (request.query as Record<string, unknown>).user_code;
    return reply.redirect(typeof code === 'string' ? `/app/oauth/device?user_code=${encodeURIComponent(code)}` : '/app/oauth/device');
  });
  app.route({ method: ['GET', 'POST', 'DELETE', 'PUT', 'OPTIONS'], url: '/oauth/*', schema: hide, config, handler: (request, reply) => handOver(request, reply) });
}
