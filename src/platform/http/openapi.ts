/**
 * The OpenAPI 3.1 document, generated from the same route definitions that
 * validate requests. An onRoute hook adds what every operation shares: the
 * error responses with the envelope, the security requirement, and the scope
 * and plan lines, so no route repeats them.
 */
import swagger from '@fastify/swagger';
import { SCOPE_WORDS } from '../../modules/oauth/scope-words.ts';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { FEATURES, minimumPlanFor } from '../auth/plans.ts';
import { ERROR_TYPES } from '../errors.ts';
import { ErrorEnvelope } from './schemas.ts';
import { openApiWebhooks } from '../../modules/webhooks/webhooks.openapi.ts';

export const API_VERSION = '1.0.0';

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request (BadRequestException): malformed JSON or URL, a JSON body nested more than 64 levels, a malformed multipart body, a percent-encoded `api_key` name, or a request the operation cannot take.',
  401: 'The API key is missing, wrong or revoked (AuthenticationException).',
  403: 'The key lacks the scope (AuthorizationException; details list required_scope and granted_scopes) or the plan lacks the feature (PlanRestrictionException).',
  404: 'Not found (ModelNotFoundException). Records of other workspaces answer exactly like missing ones.',
  409: 'Conflict (ConflictException, IdempotencyInProgressException).',
  413: 'The body is larger than accepted (PayloadTooLargeException).',
  414: 'A path segment is longer than 2048 characters (URITooLongException).',
  415: 'Unsupported Content-Type (UnsupportedMediaTypeException); the message quotes the type sent.',
  422: 'Validation failed (ValidationException; details map each field to its messages: schema rules, NUL characters or unpaired surrogates in any text, numbers out of range), or an Idempotency-Key reused with another request (IdempotencyKeyReusedException).',
  429: 'Rate limit exceeded (RateLimitException); Retry-After gives the seconds to wait.',
  500: 'Unexpected error (InternalServerError); no internal detail is returned.',
};

const errorResponse = (status: number) => ({ description: ERROR_DESCRIPTIONS[status] ?? 'Error', $ref: 'ErrorEnvelope#' });

/**
 * Error responses a route adds by its own logic (a 404 for a body field, a 409 of a state conflict),
 * documented with the envelope: `response: { 200: …, ...errorResponses(404, 409) }`.
 */
const OAUTH_SCOPES: Record<string, string> = SCOPE_WORDS;

export function errorResponses(...statuses: number[]): Record<number, ReturnType<typeof errorResponse>> {
  return Object.fromEntries(statuses.map((status) => [status, errorResponse(status)]));
}

const BODY_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * The error statuses every operation can answer through the platform (guard,
 * input checks, body parsing, idempotency, the error handler), added to each
 * route as it is registered, so a new route documents them without listing
 * them. A route lists only the statuses its own logic adds (404 of a body
 * field, 409 of a state conflict, 502 …).
 */
export function platformStatuses(route: Pick<RouteOptions, 'url' | 'method'>, config: { public?: boolean }): number[] {
  const method = (Array.isArray(route.method) ? route.method[0] : route.method) ?? 'GET';
  const statuses = [400, 422, 429, 500];
  if (!config.public) statuses.push(401, 403);
  if (route.url.includes(':') || route.url.includes('*')) statuses.push(404, 414);
  if (BODY_METHODS.includes(method)) statuses.push(413, 415);
  if (BODY_METHODS.includes(method) && !config.public) statuses.push(409);
  return statuses.sort();
}

/** Adds shared responses and documentation to every API route as it is registered. */
function decorateRoute(route: RouteOptions): void {
  const schema = (route.schema ??= {}) as Record<string, unknown> & { response?: Record<string, unknown>; description?: string };
  if (schema.hide) return;
  const config = (route.config ?? {}) as { scope?: string | string[]; feature?: keyof typeof FEATURES; public?: boolean; person?: string; role?: string };
  const response = (schema.response ??= {});
  const method = (Array.isArray(route.method) ? route.method[0] : route.method) ?? 'GET';
  for (const status of platformStatuses(route, config)) response[status] ??= errorResponse(status);

  const lines: string[] = [];
  if (schema.description) lines.push(String(schema.description), '');
  if (config.public) {
    lines.push('**Authentication:** none.');
    schema.security = [];
  } else if (config.person) {
    lines.push(`**Authentication:** a person signed in to the application (the \`flipbook_session\` cookie, with \`X-CSRF-Token\` on writes); API keys and OAuth tokens get 403.${config.role ? ` **Role:** \`${config.role}\` or above in the active workspace.` : ''}`);
    schema.security = [{ sessionCookie: [] }];
  } else {
    const scopes = config.scope === undefined ? [] : Array.isArray(config.scope) ? config.scope : [config.scope];
    lines.push(`**Scope:** ${scopes.length ? scopes.map((s) => `\`${s}\``).join(' and ') : 'any valid key'}.`);
    schema['x-scopes'] = scopes;
    // An OAuth token needs the same scopes a key does.
    schema.security = [{ bearerAuth: [] }, { apiKeyQuery: [] }, { sessionCookie: [] }, { oauth2: scopes }];
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
        license: { name: 'MIT', identifier: 'MIT' },
        description: [
          'Turns uploaded documents into flipbooks: page-turning publications with a public reader, access control, analytics and webhooks.',
          '',
          '**Authentication:** `Authorization: Bearer wsk_live_…` (or `wsk_test_…`). The `api_key` query parameter is accepted but discouraged: URLs end up in logs. The application (`/app`) calls the same operations with a person\'s session cookie and the scopes of their role (docs/people-and-teams.md).',
          '',
          '**Envelope:** success bodies are `{ data, meta? }`; every error is `{ error: { message, type, details? } }` with a stable `type`: ' +
            Object.entries(ERROR_TYPES).map(([type, status]) => `\`${type}\` (${status})`).join(', ') + '.',
          '',
          '**Pagination:** cursor based: follow `meta.next_cursor` while `meta.has_more` is true. Cursors are opaque.',
          '',
          '**Answers before any operation:** a request the HTTP parser refuses gets the same envelope: 400 (not valid HTTP), 408 (`RequestTimeoutException`), 431 (`RequestHeaderFieldsTooLargeException`: headers over 16 KB); an unknown path 404 (`RouteNotFoundException`), a known path with another method 405 (`MethodNotAllowedException`, with `Allow`). A trailing slash is ignored.',
          '',
          '**Rate limits:** 1,000 requests a minute per workspace, 100 a minute per workspace and operation, 10 a minute per IP without a key. Every response carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`; a 429 carries `Retry-After`.',
          '',
          '**Guides:** in the `docs/` folder of the Flipbook repository (index: `docs/README.md`): `api-conventions.md`, `books.md`, `conversion.md`, `books-from-content.md`, `reader.md`, `access.md`, `brand.md`, `analytics.md` (the exact meaning of every analytics figure), `webhooks.md` (verifying signatures), `catalogs.md`, `people-and-teams.md`, `configuration.md`, `self-hosting.md`, `security.md`, `decisions.md`.',
        ].join('\n'),
      },
      servers: [{ url: options.publicBaseUrl }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'A workspace API key (wsk_live_… or wsk_test_…), or an OAuth access token (fbo_at_…) with the same scopes checks: see oauth2.' },
          oauth2: {
            type: 'oauth2',
            description: 'OAuth 2.1 for integrations acting for a person in one workspace (docs/oauth.md). Metadata: /.well-known/oauth-authorization-server. PKCE S256 is required; the access token is sent as a bearer token.',
            flows: {
              authorizationCode: { authorizationUrl: '/oauth/authorize', tokenUrl: '/oauth/token', refreshUrl: '/oauth/token', scopes: OAUTH_SCOPES },
            },
          },
          apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key', description: 'Accepted but discouraged: it leaks into logs.' },
          sessionCookie: { type: 'apiKey', in: 'cookie', name: 'flipbook_session', description: 'A person signed in to the application (/app). Writes also need `X-CSRF-Token`: the `csrf_token` of `GET /v1/account`. Acts with the scopes of the person\'s role in the active workspace.' },
        },
      },
      security: [{ bearerAuth: [] }, { apiKeyQuery: [] }, { sessionCookie: [] }, { oauth2: [] }],
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
