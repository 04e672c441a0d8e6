/**
 * Starts the service: the API, the workers, or both in one process (the
 * default), on the embedded database or on PostgreSQL. Used by `flipbook serve`
 * and by the tests, so both run exactly the same wiring.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.ts';
import { createJobDefinitions } from './jobs.ts';
import { AdminChannel, adminSocketPath } from './platform/admin/admin-channel.ts';
import { OPERATOR } from './modules/workspaces/audit-trail.service.ts';
import { createAdminCommands } from './admin-commands.ts';
import type { Config } from './platform/config/env.ts';
import { acquireDataDirLock } from './platform/db/data-dir-lock.ts';
import { openDatabase, type Database, type DatabaseTarget } from './platform/db/database.ts';
import { Metrics } from './platform/metrics/metrics.ts';
import { startMetricsServer } from './platform/metrics/metrics.routes.ts';
import { MemoryRateLimitStore, PostgresRateLimitStore, RedisRateLimitStore, type RateLimitStore } from './platform/http/rate-limit-store.ts';
import { JobQueue } from './platform/jobs/queue.ts';
import { createLogger } from './platform/logger.ts';
import { createStorage } from './platform/storage/index.ts';
import type { Storage } from './platform/storage/storage.ts';
import { loadSecretKey } from './platform/config/secret.ts';
import { createServices, type Services } from './services.ts';
import { WebhookWorker } from './modules/webhooks/webhook-worker.ts';
import { startConversionLeaseSweeper } from './modules/books/conversion-lease.ts';

export interface RuntimeOptions {
  api: boolean;
  worker: boolean;
  /** Override the database (tests use an in-memory PGlite or a scratch PostgreSQL database). */
  database?: DatabaseTarget;
  logger?: Logger;
  /** Start the local admin socket (embedded mode). Default: on when the database is PGlite under DATA_DIR. */
  adminChannel?: boolean;
  /** Called once with the bootstrap key, when one is created. Default: print it. */
  onBootstrap?: (info: BootstrapInfo) => void;
  /** Extra routes under /v1 (tests). */
  extraRoutes?: FastifyPluginAsync;
}

export interface Runtime {
  config: Readonly<Config>;
  database: Database;
  storage: Storage;
  queue: JobQueue;
  services: Services;
  logger: Logger;
  app: FastifyInstance | null;
  /** The rate-limit counters the API uses (null without the API role). */
  rateLimitStore: RateLimitStore | null;
  /** The address the API listens on, when it does. */
  url: string | null;
  /** The process's metrics, when on (METRICS_PORT or METRICS_TOKEN). */
  metrics: Metrics | null;
  /** The port GET /metrics listens on of its own (METRICS_PORT), when it does. */
  metricsPort: number | null;
  stop(): Promise<void>;
}

function createRateLimitStore(config: Config, database: Database): RateLimitStore {
  if (config.rateLimitStore === 'redis') return new RedisRateLimitStore(config.REDIS_URL, config.REDIS_KEY_PREFIX);
  if (database.kind === 'postgres') return new PostgresRateLimitStore(database.runner);
  return new MemoryRateLimitStore();
}

export interface BootstrapInfo {
  workspaceName: string;
  key: string;
  ownerEmail: string;
  /** A one-time link that signs the owner in to the application. */
  signInLink: string;
}

function printBootstrapKey(info: BootstrapInfo, url: string): void {
  const lines = [
    `Created workspace "${info.workspaceName}" (Company plan) with an all-scope API key.`,
    'This key is shown once; only its hash is stored:',
    '',
    `    ${info.key}`,
    '',
    'Try it:',
    `    curl -H "Authorization: Bearer ${info.key}" ${url}/v1/me`,
    '',
    `Sign in to the application as its owner (${info.ownerEmail}) with this one-time link:`,
    '',
    `    ${info.signInLink}`,
    '',
    'It works once; `npx flipbook users invite --workspace 1 --email … --role owner` prints another.',
  ];
  const width = Math.max(...lines.map((l) => l.length)) + 2;
  process.stdout.write(`\n┌${'─'.repeat(width)}┐\n${lines.map((l) => `│ ${l.padEnd(width - 1)}│`).join('\n')}\n└${'─'.repeat(width)}┘\n\n`);
}

export async function startRuntime(config: Readonly<Config>, options: RuntimeOptions): Promise<Runtime> {
  const logger = options.logger ?? createLogger(config);
  const target: DatabaseTarget = options.database ?? (config.database.kind === 'postgres'
    ? { kind: 'postgres', url: config.database.url, poolSize: config.DATABASE_POOL_SIZE }
    : { kind: 'pglite', dataDir: config.database.dataDir });
  const embeddedOnDisk = target.kind === 'pglite' && target.dataDir !== 'memory';
  const releaseLock = embeddedOnDisk ? acquireDataDirLock(config.dataDir) : () => undefined;

  const cleanups: (() => Promise<void> | void)[] = [releaseLock];
  const runCleanups = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    cleanups.length = 0;
  };
  try {
    const database = await openDatabase(target);
    cleanups.push(() => database.close());
    await database.migrate();

    const storage = createStorage(config);
    const queue = new JobQueue({ database, log: logger.child({ component: 'jobs' }), concurrency: config.WORKER_CONCURRENCY });
    const metrics = config.METRICS_PORT || config.METRICS_TOKEN ? new Metrics(database) : null;
    if (metrics) queue.onJobEnd = (job) => metrics.observeJob(job);
    const secretKey = await loadSecretKey(config);
    const services = createServices({ database, storage, queue, config, logger, secretKey });
    await services.workspaces.start();
    cleanups.push(() => services.workspaces.stop());
    cleanups.push(() => services.outbound.close());
    queue.register(createJobDefinitions({ database, storage, services, config }));
    await queue.start({ work: options.worker });
    cleanups.push(() => queue.stop(config.SHUTDOWN_TIMEOUT_MS));
    if (options.worker) {
      // A burst of API requests (reader events) must not starve deliveries: on PostgreSQL the webhook loop has its own few
      // connections; on PGlite's one connection its operations take turns with everyone else's.
      const webhookDatabase = database.kind === 'postgres' ? await openDatabase({ kind: 'postgres', url: database.url!, poolSize: 4 }) : database;
      if (webhookDatabase !== database) cleanups.push(() => webhookDatabase.close());
      const webhookWorker = new WebhookWorker({
        db: webhookDatabase.lane('webhooks'), outbound: services.outbound, box: services.webhookSecrets, log: logger.child({ component: 'webhooks' }),
        perEndpoint: config.WEBHOOK_ENDPOINT_CONCURRENCY, perEndpointMax: config.WEBHOOK_ENDPOINT_MAX_CONCURRENCY, total: config.WEBHOOK_CONCURRENCY,
      });
      if (metrics) webhookWorker.dispatcher.onAttempt = (result) => metrics.webhookDeliveries.inc({ result });
      webhookWorker.start();
      services.webhooks.wake = () => webhookWorker.wake();
      cleanups.push(() => webhookWorker.stop(config.SHUTDOWN_TIMEOUT_MS));
      cleanups.push(startConversionLeaseSweeper({ db: database.db, queue, ttlMs: config.CONVERSION_LEASE_SECONDS * 1000, log: logger.child({ component: 'conversion-lease' }) }));
    }

    let app: FastifyInstance | null = null;
    let rateLimitStore: RateLimitStore | null = null;
    let url: string | null = null;
    if (options.api) {
      const store = createRateLimitStore(config, database);
      rateLimitStore = store;
      cleanups.push(() => store.close());
      app = await buildApp({ config, database, storage, queue, services, rateLimitStore: store, secretKey, logger, extraRoutes: options.extraRoutes, metrics });
      cleanups.push(() => app!.close());
      await app.listen({ host: config.HOST, port: config.PORT, listenTextResolver: (address) => `API listening on ${address}` });
      const address = app.server.address();
      url = typeof address === 'object' && address ? `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`.replace('0.0.0.0', '127.0.0.1') : null;
    }

    let metricsPort: number | null = null;
    if (metrics && config.METRICS_PORT) {
      const server = await startMetricsServer(metrics, { host: config.HOST, port: config.METRICS_PORT, token: config.METRICS_TOKEN });
      metricsPort = server.port;
      cleanups.push(() => server.close());
    }

    if (options.adminChannel ?? embeddedOnDisk) {
      const channel = new AdminChannel(createAdminCommands(services, database), logger.child({ component: 'admin' }));
      await channel.listen(adminSocketPath(config.dataDir));
      cleanups.push(() => channel.close());
    }

    if (config.BOOTSTRAP_WORKSPACE) {
      const created = await services.workspaces.bootstrap();
      if (created) {
        const owner = await services.members.addByOperator(created.workspace.id, config.BOOTSTRAP_OWNER_EMAIL, 'owner', OPERATOR);
        const signInLink = await services.accounts.issueSignInLink(owner.email);
        const info: BootstrapInfo = { workspaceName: created.workspace.name, key: created.key.key, ownerEmail: owner.email, signInLink };
        if (options.onBootstrap) options.onBootstrap(info);
        else printBootstrapKey(info, url ?? config.publicBaseUrl);
        logger.info({ workspaceId: created.workspace.id, keyId: created.key.id }, 'bootstrap workspace and key created');
      }
    }

    let stopping: Promise<void> | null = null;
    return {
      config, database, storage, queue, services, logger, app, url, rateLimitStore, metrics, metricsPort,
      stop() {
        stopping ??= runCleanups();
        return stopping;
      },
    };
  } catch (error) {
    await runCleanups().catch(() => undefined);
    throw error;
  }
}
