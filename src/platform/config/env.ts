/**
 * The whole environment of the service, described once, parsed once at start.
 * Every bad value is reported in one message; the result is frozen and passed
 * into the builders (nothing reads process.env at import time).
 */
import path from 'node:path';
import { Type, type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { OutboundPolicy } from '../outbound/outbound-policy.ts';

const Port = Type.Integer({ minimum: 0, maximum: 65535 });
const PositiveInt = Type.Integer({ minimum: 0 });

export const EnvSchema = Type.Object({
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], { default: 'development' }),
  HOST: Type.String({ default: '0.0.0.0', description: 'Address the API listens on.' }),
  PORT: Type.Integer({ ...Port, default: 3000, description: 'Port the API listens on.' }),
  PUBLIC_BASE_URL: Type.String({ default: '', description: 'Public address of the service (readers and asset URLs). Default: http://localhost:PORT.' }),
  DATA_DIR: Type.String({ default: './data', description: 'Embedded database, local file storage, admin socket.' }),
  DATABASE_URL: Type.String({ default: '', description: 'PostgreSQL connection string. Empty: embedded PGlite under DATA_DIR.' }),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  REDIS_URL: Type.String({ default: '', description: 'Redis for shared rate-limit counters. Empty: counters in PostgreSQL (in memory for the embedded single-process mode).' }),
  REDIS_KEY_PREFIX: Type.String({ default: 'flipbook:', maxLength: 100, description: 'Prefix of every Redis key the service writes, so several deployments (or test runs) can share one Redis.' }),
  METRICS_PORT: Type.Integer({ ...Port, default: 0, description: 'Serve GET /metrics (Prometheus text) on this port of HOST, apart from the API, in every process (API and worker). 0: not on a port of its own.' }),
  METRICS_TOKEN: Type.String({ default: '', description: 'Serve GET /metrics on the API port to requests with "Authorization: Bearer <METRICS_TOKEN>" (also required on METRICS_PORT when set). Empty, without METRICS_PORT: metrics are off.' }),
  LOG_LEVEL: Type.Union([Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent')], { default: 'info' }),
  LOG_PRETTY: Type.Boolean({ default: false }),
  BOOTSTRAP_WORKSPACE: Type.Boolean({ default: true, description: 'On first start with an empty database, create a Company workspace and print an all-scope key once.' }),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 1_048_576, description: 'Largest JSON body accepted.' }),
  UPLOAD_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 200 * 1024 * 1024, description: 'Largest uploaded document.' }),
  BOOK_VERSIONS_KEPT: Type.Integer({ minimum: 1, maximum: 1000, default: 10, description: "Versions of a book whose files are kept (the newest, and always the current one); older versions' pages and files are deleted (docs/book-versions.md)." }),
  KONVA_BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, maximum: 512 * 1024 * 1024, default: 256 * 1024 * 1024, description: 'Largest POST /v1/books/konva body (page images as data URLs); the JSON is held in memory while it is checked, so this bounds that route\'s memory.' }),
  TRUST_PROXY: Type.Boolean({ default: false, description: 'Trust X-Forwarded-* headers (behind a reverse proxy): client IPs for rate limits come from them.' }),
  CORS_ORIGINS: Type.String({ default: '*', description: 'Comma-separated origins allowed to call the API from a browser, or *.' }),
  RATE_LIMIT_WORKSPACE_PER_MINUTE: Type.Integer({ ...PositiveInt, default: 1000, description: '0 disables.' }),
  RATE_LIMIT_ENDPOINT_PER_MINUTE: Type.Integer({ ...PositiveInt, default: 100, description: '0 disables.' }),
  RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: Type.Integer({ ...PositiveInt, default: 10, description: '0 disables.' }),
  IDEMPOTENCY_TTL_HOURS: Type.Integer({ minimum: 1, maximum: 24 * 30, default: 24 }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 20_000, description: 'How long in-flight requests and jobs get to finish on shutdown.' }),
  S3_BUCKET: Type.String({ default: '', description: 'Set to store files in S3-compatible storage instead of DATA_DIR.' }),
  S3_REGION: Type.String({ default: 'us-east-1' }),
  S3_ENDPOINT: Type.String({ default: '', description: 'Custom endpoint for S3-compatible services (MinIO, R2, …).' }),
  S3_ACCESS_KEY_ID: Type.String({ default: '' }),
  S3_SECRET_ACCESS_KEY: Type.String({ default: '' }),
  S3_FORCE_PATH_STYLE: Type.Boolean({ default: false }),
  S3_PUBLIC_URL: Type.String({ default: '', description: 'Public base URL of the bucket (CDN). Empty: assets are served through the API.' }),
  CONVERSION_THREADS: Type.Integer({ minimum: 0, maximum: 64, default: 0, description: 'Page render threads per conversion; 0 = one per core.' }),
  CONVERSION_BACKGROUND_THREADS: Type.Integer({ minimum: 0, maximum: 64, default: 0, description: 'Render threads per conversion once its book is readable (the pages drawn in the background); 0 = as CONVERSION_THREADS. 1 leaves a core to pages drawn on request.' }),
  OFFICE_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 120_000, description: 'Longest a LibreOffice conversion may run before it is killed and the upload fails.' }),
  OFFICE_MEMORY_LIMIT_MB: Type.Integer({ minimum: 0, default: 2048, description: 'Address-space limit of each LibreOffice process in MB (prlimit --as); 0 = none.' }),
  OFFICE_MAX_UNCOMPRESSED_MB: Type.Integer({ minimum: 1, default: 1024, description: 'Zip-bomb check: largest total unpacked size of a DOCX/XLSX/PPTX/ODF archive, in MB.' }),
  OFFICE_MAX_COMPRESSION_RATIO: Type.Integer({ minimum: 2, default: 100, description: 'Zip-bomb check: largest unpacked/packed size ratio of an office archive (and of any part over 1 MB).' }),
  RENDER_IDLE_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 30_000, description: 'A PDF renderer process left without work this long exits, giving its memory back.' }),
  MAX_PAGES_PER_BOOK: Type.Integer({ minimum: 1, default: 2000, description: 'A document with more pages fails its upload batch at once.' }),
  CONVERSION_LEASE_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 20, description: 'A running conversion renews its lease every quarter of this; a worker silent for this long (killed) has its book re-queued within about 1.5 times it.' }),
  PAGE_WIDTHS: Type.String({ default: '320,1024,2048', description: 'Widths in px each page is rendered at (comma-separated).' }),
  PAGE_WIDTHS_ON_DEMAND: Type.String({ default: '2048', description: 'Widths of PAGE_WIDTHS a PDF conversion leaves out, each drawn on its first request and stored (comma-separated; others are ignored; empty: all during the conversion).' }),
  ZOOM_WIDTHS: Type.String({ default: '3072,4096,5120', description: 'Extra page renditions for the reader\'s zoom, drawn on first request and stored (comma-separated, up to 8192; empty: none).' }),
  RENDITIONS_PER_MINUTE: Type.Integer({ minimum: 1, default: 120, description: 'On-demand page renditions one client address may have drawn per minute (those already stored are not counted).' }),
  WORKER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 2, description: 'Jobs one worker process runs at once.' }),
  SECRET_KEY: Type.String({ default: '', description: 'Signs reader sessions (at least 32 characters). Empty: a random key kept in DATA_DIR/secret.key; set it when API processes do not share DATA_DIR.' }),
  SMTP_URL: Type.String({ default: '', description: 'smtp:// or smtps:// URL for outgoing mail (sign-in links). Empty: mail stays in the local outbox (`flipbook mail list`).' }),
  MAIL_FROM: Type.String({ default: 'Flipbook <no-reply@localhost>', description: 'Sender of outgoing mail.' }),
  MAGIC_LINK_TTL_MINUTES: Type.Integer({ minimum: 1, maximum: 7 * 24 * 60, default: 30, description: 'How long a reader sign-in link stays valid (it works once).' }),
  OUTBOUND_ALLOWED_HOSTS: Type.String({ default: '', description: 'Comma-separated host names, addresses or CIDR ranges the service may call although they are private or loopback, over plain http too (webhook receivers, feeds and images on an internal network; local testing). Empty: only public https addresses.' }),
  WEBHOOK_DELIVERY_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 30, description: 'How long finished webhook deliveries (and their attempts) stay in the delivery log.' }),
  WEBHOOK_ENDPOINT_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 256, default: 10, description: 'Requests one worker process has in flight to one webhook subscription while the receiver answers slowly (or not), so a slow receiver never holds back the others.' }),
  WEBHOOK_ENDPOINT_MAX_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1024, default: 64, description: 'Requests one worker process may have in flight to one webhook subscription whose receiver answers fast (within 250 ms): the window grows from WEBHOOK_ENDPOINT_CONCURRENCY up to this, and falls back on slow answers, timeouts, 429 and 503.' }),
  WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 4096, default: 256, description: 'Webhook requests one worker process has in flight at most, over all subscriptions.' }),
  AUTH_PASSWORDS: Type.Boolean({ default: false, description: 'Let people set a password and sign in with it (argon2id). Off: sign-in links and passkeys only.' }),
  BOOTSTRAP_OWNER_EMAIL: Type.String({ default: 'owner@localhost', maxLength: 254, description: 'The owner of the bootstrap workspace; the first start prints a one-time link that signs them in.' }),
  SIGN_IN_LINK_TTL_MINUTES: Type.Integer({ minimum: 1, maximum: 24 * 60, default: 15, description: 'How long a sign-in link to the application stays valid (it works once).' }),
  SESSION_TTL_DAYS: Type.Integer({ minimum: 1, maximum: 365, default: 30, description: 'A signed-in session ends this long after its last use.' }),
  OAUTH_ACCESS_TOKEN_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: 86_400, default: 3600, description: 'How long an OAuth access token (fbo_at_…) is valid.' }),
  OAUTH_REFRESH_TOKEN_TTL_DAYS: Type.Integer({ minimum: 1, maximum: 365, default: 30, description: 'How long an OAuth refresh token (fbo_rt_…) is valid; each use rotates it and the new one gets this lifetime again.' }),
  OAUTH_PER_CLIENT_PER_MINUTE: Type.Integer({ ...PositiveInt, default: 300, description: 'Requests to the OAuth endpoints (/oauth/…) per client address per minute; 0 disables. Apart from RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: an integration\'s server exchanges codes and refreshes tokens for all its users from one address.' }),
  OAUTH_DYNAMIC_REGISTRATION: Type.Boolean({ default: false, description: 'Open dynamic client registration (RFC 7591) at /oauth/register, for public clients only (AI assistants, MCP clients).' }),
  SIGN_IN_PER_ADDRESS_PER_HOUR: Type.Integer({ ...PositiveInt, default: 10, description: 'Sign-in attempts (links asked, passwords tried) per e-mail address per hour; 0 disables.' }),
  SIGN_IN_PER_CLIENT_PER_HOUR: Type.Integer({ ...PositiveInt, default: 60, description: 'Sign-in attempts per client address per hour; 0 disables.' }),
  READER_SESSION_HOURS: Type.Integer({ minimum: 1, maximum: 24 * 365, default: 24 * 30, description: 'How long a reader stays signed in to a book with an access list.' }),
  CATALOG_FEED_MAX_BYTES: Type.Integer({ minimum: 1024, default: 64 * 1024 * 1024, description: 'Largest product feed fetched from a catalog source_url (all pages together).' }),
  CATALOG_FEED_MAX_ITEMS: Type.Integer({ minimum: 1, default: 50_000, description: 'Most items one feed import keeps; the rest is reported in the sync job.' }),
  CATALOG_FEED_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 60_000, description: 'Deadline of one feed request (connection to last byte).' }),
  CATALOG_RESYNC_INTERVAL_MINUTES: Type.Integer({ minimum: 0, default: 0, description: 'Re-import every catalog feed this often (minutes); 0 turns the scheduled re-sync off.' }),
  SHOPIFY_CLIENT_SECRET: Type.String({ default: '', description: 'Client secret of the Shopify app: connector requests carry X-Shopify-Hmac-Sha256, the HMAC-SHA256 of the raw body with it. Empty: the connector operations answer 403.' }),
  ANALYTICS_STATEMENT_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 15_000, description: 'Longest one analytics or export statement may run before it is stopped (503); 0 disables.' }),
  ANALYTICS_EXACT_MAX_SEGMENTS: Type.Integer({ minimum: 0, default: 200_000, description: 'page-performance and book-flow answer exactly from the raw events up to this many page segments in the range; above it, from the day and month rollups (page-performance: median within 1.1 %, unique readers by HyperLogLog, standard error 2.3 %; book-flow: transition readers by HyperLogLog; every count and sum still exact).' }),
  ANALYTICS_ROLLUP_SETTLE_SECONDS: Type.Integer({ minimum: 0, default: 10, description: 'Interaction events younger than this wait for the next analytics rollup run (a transaction still inserting lower ids is not skipped); the queries read them raw meanwhile.' }),
  EXPORT_BATCH_ROWS: Type.Integer({ minimum: 10, maximum: 100_000, default: 5000, description: 'Rows a CSV export reads from the database per batch.' }),
  EXPORT_COPY_SLOTS: Type.Integer({
    minimum: 0, maximum: 50, default: 2,
    description: 'PostgreSQL: interaction-events exports streamed at once by one COPY each (each holds a pool connection for its download); more run in batches (the same bytes). 0: always batches.',
  }),
});

export type Env = Static<typeof EnvSchema>;

export interface Config extends Env {
  /** Absolute DATA_DIR. */
  dataDir: string;
  /** PUBLIC_BASE_URL without trailing slash, defaulted from PORT. */
  publicBaseUrl: string;
  database: { kind: 'pglite'; dataDir: string } | { kind: 'postgres'; url: string };
  storage: { kind: 'local'; root: string } | { kind: 's3'; bucket: string };
  rateLimitStore: 'memory' | 'postgres' | 'redis';
  corsOrigins: string[] | '*';
  pageWidths: number[];
  onDemandWidths: { lazy: number[]; zoom: number[] };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Parses an environment (process.env by default) into a frozen Config.
 * Throws ConfigError listing every problem at once.
 */
export function loadConfig(source: Record<string, string | undefined> = process.env, overrides: Partial<Env> = {}): Readonly<Config> {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = source[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  Object.assign(raw, overrides);
  const withDefaults = Value.Default(EnvSchema, Value.Convert(EnvSchema, raw));
  // One message per variable, checked one by one so no problem hides another.
  const problems: string[] = [];
  for (const [name, schema] of Object.entries(EnvSchema.properties) as [string, TSchema & { anyOf?: { const: string }[] }][]) {
    const value = (withDefaults as Record<string, unknown>)[name];
    const first = [...Value.Errors(schema, value)][0];
    if (!first) continue;
    const message = schema.anyOf ? `must be one of ${schema.anyOf.map((s) => s.const).join(', ')}` : first.message;
    problems.push(`${name}: ${message} (got ${JSON.stringify(source[name] ?? raw[name])})`);
  }
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
  const env = withDefaults as Env;
  const extra: string[] = [];
  if (env.S3_BUCKET && (!env.S3_ACCESS_KEY_ID) !== (!env.S3_SECRET_ACCESS_KEY)) {
    extra.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together');
  }
  if (env.DATABASE_URL && !/^postgres(ql)?:\/\//.test(env.DATABASE_URL)) {
    extra.push('DATABASE_URL: must start with postgres:// or postgresql://');
  }
  if (env.REDIS_URL && !/^rediss?:\/\//.test(env.REDIS_URL)) {
    extra.push('REDIS_URL: must start with redis:// or rediss://');
  }
  if (env.PUBLIC_BASE_URL && !/^https?:\/\/[^/]+/.test(env.PUBLIC_BASE_URL)) {
    extra.push('PUBLIC_BASE_URL: must be an absolute http(s) URL');
  }
  const pageWidths = env.PAGE_WIDTHS.split(',').map((w) => Number(w.trim()));
  if (pageWidths.length === 0 || pageWidths.length > 6 || pageWidths.some((w) => !Number.isInteger(w) || w < 64 || w > 4096)) {
    extra.push('PAGE_WIDTHS: 1 to 6 comma-separated integers from 64 to 4096');
  }
  const widthList = (value: string) => value.split(',').map((w) => w.trim()).filter(Boolean).map(Number);
  // A width PAGE_WIDTHS does not list is not made at all, on demand or not.
  const lazyWidths = widthList(env.PAGE_WIDTHS_ON_DEMAND).filter((w) => pageWidths.includes(w));
  const zoomWidths = widthList(env.ZOOM_WIDTHS);
  if (zoomWidths.length > 6 || zoomWidths.some((w) => !Number.isInteger(w) || w < 64 || w > 8192)) extra.push('ZOOM_WIDTHS: up to 6 comma-separated integers from 64 to 8192');
  if (env.SECRET_KEY && env.SECRET_KEY.length < 32) extra.push('SECRET_KEY: must be at least 32 characters');
  if (env.SMTP_URL && !/^smtps?:\/\//.test(env.SMTP_URL)) extra.push('SMTP_URL: must start with smtp:// or smtps://');
  extra.push(...OutboundPolicy.problems(env.OUTBOUND_ALLOWED_HOSTS).map((p) => `OUTBOUND_ALLOWED_HOSTS: ${p}`));
  if (extra.length > 0) throw new ConfigError(`Invalid configuration:\n  - ${extra.join('\n  - ')}`);

  const dataDir = path.resolve(env.DATA_DIR);
  const config: Config = {
    ...env,
    dataDir,
    publicBaseUrl: (env.PUBLIC_BASE_URL || `http://localhost:${env.PORT}`).replace(/\/+$/, ''),
    database: env.DATABASE_URL ? { kind: 'postgres', url: env.DATABASE_URL } : { kind: 'pglite', dataDir: path.join(dataDir, 'pglite') },
    storage: env.S3_BUCKET ? { kind: 's3', bucket: env.S3_BUCKET } : { kind: 'local', root: path.join(dataDir, 'files') },
    // The embedded database admits one process, so in-process counters are exact there.
    rateLimitStore: env.REDIS_URL ? 'redis' : env.DATABASE_URL ? 'postgres' : 'memory',
    pageWidths: [...new Set(pageWidths)].sort((a, b) => a - b),
    onDemandWidths: { lazy: [...new Set(lazyWidths)], zoom: [...new Set(zoomWidths)].sort((a, b) => a - b) },
    corsOrigins: env.CORS_ORIGINS.trim() === '*' ? '*' : env.CORS_ORIGINS.split(',').map((s) => s.trim()).filter(Boolean),
  };
  return Object.freeze(config);
}
