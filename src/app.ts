/**
 * Builds the HTTP application without listening, so tests run it in-process
 * and production starts it from src/runtime.ts. Everything it needs is passed
 * in; nothing here reads the environment.
 */
import cookie from '@fastify/cookie';
import cors from '@fastify/cors';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import type { Logger } from 'pino';
import { randomUUID } from 'node:crypto';
import type { Config } from './platform/config/env.ts';
import type { Database } from './platform/db/database.ts';
import type { JobQueue } from './platform/jobs/queue.ts';
import type { Storage } from './platform/storage/storage.ts';
import { clientErrorHandler, handleError, registerErrorHandling, registerNotFound } from './platform/http/error-handler.ts';
import { registerInputGuard } from './platform/http/input-guard.ts';
import { registerStaticHeaders } from './platform/http/static-headers.ts';
import { lazyChildLoggerFactory } from './platform/logger.ts';
import { registerGuard, type RateLimits } from './platform/http/guard.ts';
import { registerIdempotency } from './platform/http/idempotency.ts';
import { API_VERSION, registerOpenApi } from './platform/http/openapi.ts';
import type { RateLimitStore } from './platform/http/rate-limit-store.ts';
import { ClientRateLimiter } from './platform/http/client-rate-limit.ts';
import { healthRoutes } from './modules/health/health.routes.ts';
import { createReadiness } from './modules/health/readiness.ts';
import type { Metrics } from './platform/metrics/metrics.ts';
import { registerMetricsRoute, registerRequestMetrics } from './platform/metrics/metrics.routes.ts';
import { meRoutes } from './modules/workspaces/me.routes.ts';
import { apiKeysRoutes } from './modules/workspaces/api-keys.routes.ts';
import { authRoutes } from './modules/people/auth.routes.ts';
import { accountRoutes } from './modules/people/account.routes.ts';
import { membersRoutes } from './modules/people/members.routes.ts';
import { oauthRoutes } from './modules/oauth/oauth.routes.ts';
import { oauthEndpoints } from './modules/oauth/oauth.mount.ts';
import { PEOPLE_SCHEMAS } from './modules/people/people.schemas.ts';
import { mcpRoutes } from './modules/mcp/mcp.routes.ts';
import { downloadDocument } from './modules/mcp/download.ts';
import { booksRoutes } from './modules/books/books.routes.ts';
import { bulkSettingsRoutes } from './modules/books/bulk-settings.routes.ts';
import { brandRoutes } from './modules/brand/brand.routes.ts';
import { assetsRoutes } from './platform/storage/assets.routes.ts';
import { PageRenditionsService } from './modules/books/page-renditions.service.ts';
import { RenderWorkerPool } from './modules/conversion/render-worker-pool.ts';
import { accessRoutes } from './modules/access/access.routes.ts';
import { trackedLinksRoutes } from './modules/analytics/tracked-links.routes.ts';
import { leadFormsRoutes } from './modules/analytics/lead-forms.routes.ts';
import { catalogsRoutes } from './modules/catalogs/catalogs.routes.ts';
import { connectorRoutes } from './modules/connector/connector.routes.ts';
import { readerEventsRoutes } from './modules/analytics/reader-events.routes.ts';
import { analyticsRoutes } from './modules/analytics/analytics.routes.ts';
import { exportsRoutes } from './modules/analytics/exports.routes.ts';
import { webhooksRoutes } from './modules/webhooks/webhooks.routes.ts';
import { AccessGateService } from './modules/access/access-gate.service.ts';
import { gateRoutes } from './modules/access/gate.routes.ts';
import { ListsReaderPolicy } from './modules/access/reader-policy.ts';
import { ReaderGate } from './modules/reader/reader.gate.ts';
import { readerRoutes } from './modules/reader/reader.routes.ts';
import { ReaderService } from './modules/reader/reader.service.ts';
import type { Services } from './services.ts';
import { contentRoutes } from './modules/content/content.routes.ts';
import { LiveItemsService, liveItemsRoutes } from './modules/content/live-items.ts';
import { applicationRoutes } from './modules/application/application.routes.ts';
import { lazySerializers } from './platform/http/lazy-serializers.ts';

export interface AppDependencies {
  config: Readonly<Config>;
  database: Database;
  storage: Storage;
  queue: JobQueue;
  services: Services;
  rateLimitStore: RateLimitStore;
  /** The service's signing key (SECRET_KEY or DATA_DIR/secret.key). */
  secretKey: string;
  logger: Logger;
  /** More routes under /v1, registered with the same guard and conventions (tests, embedders). */
  extraRoutes?: FastifyPluginAsync;
  /** The process's metrics when they are on (METRICS_PORT or METRICS_TOKEN). */
  metrics?: Metrics | null;
}

/** How long the MCP upload tool waits for a conversion before answering with its progress. */
const MCP_CONVERSION_WAIT_MS = 120_000;

export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config, database, services } = deps;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: config.BODY_LIMIT_BYTES,
    trustProxy: config.TRUST_PROXY,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
    },
    return503OnClosing: true,
    // request.log is made when a request logs, not for every request.
    childLoggerFactory: lazyChildLoggerFactory as never,
    // `/v1/me/` is `/v1/me`; a path segment up to 2 KB reaches the route's schema (422 or 404), longer is a 414.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
    // Errors before routing (malformed URL, over-long segment) and of the HTTP parser leave in the envelope too.
    frameworkErrors: handleError,
    clientErrorHandler,
    ajv: { customOptions: { allErrors: true, coerceTypes: 'array', removeAdditional: false, useDefaults: true } },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers() } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const limits: RateLimits = {
    workspacePerMinute: config.RATE_LIMIT_WORKSPACE_PER_MINUTE,
    endpointPerMinute: config.RATE_LIMIT_ENDPOINT_PER_MINUTE,
    unauthenticatedPerMinute: config.RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE,
  };

  registerErrorHandling(app);
  if (deps.metrics) {
    registerRequestMetrics(app, deps.metrics);
    if (config.METRICS_TOKEN) registerMetricsRoute(app, deps.metrics, config.METRICS_TOKEN);
  }
  registerNotFound(app);
  registerInputGuard(app);
  registerStaticHeaders(app, {
    // The API serves JSON and the Swagger UI; the reader sets its own policy.
    contentSecurityPolicy: false,
    crossOriginResourcePolicy: { policy: 'cross-origin' },
  });
  await app.register(cors, {
    origin: config.corsOrigins === '*' ? '*' : config.corsOrigins,
    allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id'],
    // One string: the plugin joins an array on every request.
    exposedHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'X-Idempotent-Replay', 'X-Request-Id'].join(', '),
    maxAge: 600,
  });
  await registerOpenApi(app, { publicBaseUrl: config.publicBaseUrl });
  // Per-client limits (unauthenticated API calls, the public endpoints) count under a salted hash of the address, never the address itself.
  const clientLimiter = new ClientRateLimiter(deps.rateLimitStore, deps.secretKey);
  // Parses the application's session cookie before the guard reads it.
  await app.register(cookie);
  const publicOrigin = new URL(config.publicBaseUrl).origin;
  registerGuard(app, {
    workspaces: services.workspaces, accounts: services.accounts, oauth: services.oauth, publicOrigin,
    store: deps.rateLimitStore, limits, clientKey: (ip) => clientLimiter.clientKey(ip),
  });
  registerIdempotency(app, { db: database.db, ttlHours: config.IDEMPOTENCY_TTL_HOURS });

  await app.register(
    async (v1) => {
      await v1.register(healthRoutes, { ping: () => database.ping(), readiness: createReadiness({ database, storage: deps.storage, rateLimitStore: deps.rateLimitStore }) });
      await v1.register(meRoutes, { limits });
      for (const schema of PEOPLE_SCHEMAS) v1.addSchema(schema);
      await v1.register(authRoutes, {
        accounts: services.accounts, passkeys: services.passkeys, limiter: clientLimiter, publicOrigin,
        limits: { perAddressPerHour: config.SIGN_IN_PER_ADDRESS_PER_HOUR, perClientPerHour: config.SIGN_IN_PER_CLIENT_PER_HOUR },
      });
      await v1.register(accountRoutes, { accounts: services.accounts, passkeys: services.passkeys, secureCookie: publicOrigin.startsWith('https:') });
      await v1.register(membersRoutes, { members: services.members, accounts: services.accounts, limiter: clientLimiter, publicOrigin });
      await v1.register(oauthRoutes, { oauth: services.oauth });
      await v1.register(apiKeysRoutes, { workspaces: services.workspaces, auditTrail: services.auditTrail });
      await v1.register(booksRoutes, { books: services.books, uploads: services.uploads, versions: services.versions, uploadLimitBytes: config.UPLOAD_LIMIT_BYTES });
      await v1.register(bulkSettingsRoutes, { bulkSettings: services.bulkSettings });
      await v1.register(brandRoutes, { brand: services.brand });
      await v1.register(accessRoutes, { access: services.accessLists });
      await v1.register(trackedLinksRoutes, { trackedLinks: services.trackedLinks });
      await v1.register(leadFormsRoutes, { leadForms: services.leadForms });
      await v1.register(contentRoutes, { content: services.contentBooks, uploads: services.uploads, storage: deps.storage, konvaBodyLimitBytes: config.KONVA_BODY_LIMIT_BYTES });
      await v1.register(catalogsRoutes, { catalogs: services.catalogs });
      await v1.register(connectorRoutes, { connector: services.connector });
      await v1.register(analyticsRoutes, { analytics: services.analytics });
      await v1.register(exportsRoutes, { exports: services.exports });
      await v1.register(webhooksRoutes, { webhooks: services.webhooks });
      if (deps.extraRoutes) await v1.register(deps.extraRoutes);
    },
    { prefix: '/v1' },
  );

  await app.register(oauthEndpoints, { oauth: services.oauth, limiter: clientLimiter, perClientPerMinute: config.OAUTH_PER_CLIENT_PER_MINUTE });
  await app.register(mcpRoutes, {
    root: app, publicBaseUrl: config.publicBaseUrl, version: API_VERSION, maxWaitMs: MCP_CONVERSION_WAIT_MS,
    download: (url) => downloadDocument(services.outbound, url, config.UPLOAD_LIMIT_BYTES),
  });

  await app.register(assetsRoutes, {
    storage: deps.storage,
    renditions: new PageRenditionsService({
      db: database.db, storage: deps.storage, log: deps.logger.child({ component: 'renditions' }),
      // Renderers of their own, so a page asked for by a reader never waits for a conversion's renderers.
      pool: new RenderWorkerPool({ maxWorkers: 2, idleTimeoutMs: config.RENDER_IDLE_TIMEOUT_MS }),
    }),
    renditionLimit: { limiter: clientLimiter, perMinute: config.RENDITIONS_PER_MINUTE },
  });
  // One gate for every public endpoint bound to a book: the reader and its events.
  const readerService = new ReaderService({ db: database.db, storage: deps.storage, config });
  const readerGate = new ReaderGate(readerService, new ListsReaderPolicy({ lists: services.accessLists, sessions: services.readerSessions }));
  await app.register(readerRoutes, { db: database.db, storage: deps.storage, config, gate: readerGate, limiter: clientLimiter });
  await app.register(liveItemsRoutes, { service: new LiveItemsService({ db: database.db }), gate: readerGate, limiter: clientLimiter });
  await app.register(readerEventsRoutes, {
    db: database.db, gate: readerGate, events: services.readerEvents, limiter: clientLimiter, publicBaseUrl: config.publicBaseUrl,
    ...(deps.metrics ? { onIngested: (stored: number) => deps.metrics!.readerEvents.inc(stored) } : {}),
  });
  const accessGate = new AccessGateService({
    db: database.db, lists: services.accessLists, mailer: services.mailer, sessions: services.readerSessions, limiter: clientLimiter,
    linkTtlMinutes: config.MAGIC_LINK_TTL_MINUTES, publicBaseUrl: config.publicBaseUrl,
  });
  await app.register(gateRoutes, { reader: readerService, lists: services.accessLists, gate: accessGate, linkTtlMinutes: config.MAGIC_LINK_TTL_MINUTES });
  // The application's screens (src/web), which call the API above like any client.
  await app.register(applicationRoutes);

  return app;
}
