/**
 * The OpenAPI 3.1 document, generated from the same route definitions that
 * validate requests. An onRoute hook adds what every operation shares: the
 * error responses with the envelope, the security requirement, and the scope
 * and plan lines, so no route repeats them.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { FEATURES, minimumPlanFor } from '../auth/plans.ts';
import { ERROR_TYPES } from '../errors.ts';
import { ErrorEnvelope } from './schemas.ts';
import { openApiWebhooks } from '../../modules/webhooks/webhooks.openapi.ts';

export const API_VERSION = '1.0.0';

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request: malformed JSON or a request the operation cannot take.',
  401: 'The API key is missing, wrong or revoked (AuthenticationException).',
  403: 'The key lacks the scope (AuthorizationException; details list required_scope and granted_scopes) or the plan lacks the feature (PlanRestrictionException).',
  404: 'Not found (ModelNotFoundException). Records of other workspaces answer exactly like missing ones.',
  409: 'Conflict (ConflictException, IdempotencyInProgressException).',
  413: 'The body is larger than accepted (PayloadTooLargeException).',
  415: 'Unsupported Content-Type (UnsupportedMediaTypeException).',
  422: 'Validation failed (ValidationException; details map each field to its messages), or an Idempotency-Key reused with another request (IdempotencyKeyReusedException).',
  429: 'Rate limit exceeded (RateLimitException); Retry-After gives the seconds to wait.',
  500: 'Unexpected error (InternalServerError); no internal detail is returned.',
};

const errorResponse = (status: number) => ({ description: ERROR_DESCRIPTIONS[status] ?? 'Error', $ref: 'ErrorEnvelope#' });

/** Adds shared responses and documentation to every API route as it is registered. */
function decorateRoute(route: RouteOptions): void {
  const schema = (route.schema ??= {}) as Record<string, unknown> & { response?: Record<string, unknown>; description?: string };
  if (schema.hide) return;
  const config = (route.config ?? {}) as { scope?: string | string[]; feature?: keyof typeof FEATURES; public?: boolean };
  const response = (schema.response ??= {});
  const statuses = new Set<number>([500]);
  const method = (Array.isArray(route.method) ? route.method[0] : route.method) ?? 'GET';
  if (!config.public) [401, 403, 429].forEach((s) => statuses.add(s));
  else statuses.add(429);
  if (route.url.includes(':')) statuses.add(404);
  if (schema.body || schema.querystring || schema.params) statuses.add(422);
  if (['POST', 'PUT', 'PATCH'].includes(method)) [400, 413, 415].forEach((s) => statuses.add(s));
  if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(method) && !config.public) [409, 422].forEach((s) => statuses.add(s));
  for (const status of statuses) response[status] ??= errorResponse(status);

  const lines: string[] = [];
  if (schema.description) lines.push(String(schema.description), '');
  if (config.public) {
    lines.push('**Authentication:** none.');
    schema.security = [];
  } else {
    const scopes = config.scope === undefined ? [] : Array.isArray(config.scope) ? config.scope : [config.scope];
    lines.push(`**Scope:** ${scopes.length ? scopes.map((s) => `\`${s}\``).join(' and ') : 'any valid key'}.`);
    schema['x-scopes'] = scopes;
  }
  if (config.feature) {
    lines.push(`**Plan:** ${minimumPlanFor(config.feature)} (${FEATURES[config.feature].description}).`);
    schema['x-plan-feature'] = config.feature;
  }
  if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(method) && !config.public) {
    lines.push('**Idempotency:** send `Idempotency-Key` to make a retry safe; the first 2xx response is replayed for 24 hours with `X-Idempotent-Replay: true`.');
  }
  schema.description = lines.join('\n');
}

export async function registerOpenApi(app: FastifyInstance, options: { publicBaseUrl: string }): Promise<void> {
  app.addSchema(ErrorEnvelope);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Flipbook API',
        version: API_VERSION,
        description: [
          'Turns uploaded documents into flipbooks: page-turning publications with a public reader, access control, analytics and webhooks.',
          '',
          '**Authentication:** `Authorization: Bearer wsk_live_…` (or `wsk_test_…`). The `api_key` query parameter is accepted but discouraged: URLs end up in logs.',
          '',
          '**Envelope:** success bodies are `{ data, meta? }`; every error is `{ error: { message, type, details? } }` with a stable `type`: ' +
            Object.entries(ERROR_TYPES).map(([type, status]) => `\`${type}\` (${status})`).join(', ') + '.',
          '',
          '**Pagination:** cursor based: follow `meta.next_cursor` while `meta.has_more` is true. Cursors are opaque.',
          '',
          '**Rate limits:** 1,000 requests a minute per workspace, 100 a minute per workspace and operation, 10 a minute per IP without a key. Every response carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`; a 429 carries `Retry-After`.',
        ].join('\n'),
      },
      servers: [{ url: options.publicBaseUrl }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'A workspace API key: wsk_live_… or wsk_test_…' },
          apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key', description: 'Accepted but discouraged: it leaks into logs.' },
        },
      },
      security: [{ bearerAuth: [] }, { apiKeyQuery: [] }],
      webhooks: openApiWebhooks(),
    } as never,
    // Multipart bodies are streamed by their handlers, so they are shown here rather than validated by Fastify.
    transform({ schema, url, route }) {
      const multipartBody = (route.config as { multipartBody?: unknown } | undefined)?.multipartBody;
      if (!multipartBody) return { schema, url };
      return { schema: { ...schema, consumes: ['multipart/form-data'], body: multipartBody } as typeof schema, url };
    },
    refResolver: {
      buildLocalReference(json, _baseUri, _fragment, i) {
        return typeof json.$id === 'string' ? json.$id : `def-${i}`;
      },
    },
  });
  app.addHook('onRoute', decorateRoute);
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...(route.config as object), public: true, unlimited: true };
    });
    await docs.register(swaggerUi, { routePrefix: '/v1/docs', uiConfig: { deepLinking: true, defaultModelsExpandDepth: 0 } });
  });
  app.get('/v1/openapi.json', { schema: { hide: true }, config: { public: true, unlimited: true } }, async () => app.swagger());
}
