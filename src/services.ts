/** The domain services, built once per process from the platform pieces. */
import type { Database } from './platform/db/database.ts';
import { CopyOut } from './platform/db/copy-out.ts';
import type { Storage } from './platform/storage/storage.ts';
import type { JobQueue } from './platform/jobs/queue.ts';
import type { Config } from './platform/config/env.ts';
import path from 'node:path';
import { WorkspacesService } from './modules/workspaces/workspaces.service.ts';
import { BooksService } from './modules/books/books.service.ts';
import { UploadsService } from './modules/books/uploads.service.ts';
import { BookVersionsService } from './modules/books/book-versions.service.ts';
import { BulkSettingsService } from './modules/books/bulk-settings.service.ts';
import { BrandService } from './modules/brand/brand.service.ts';
import { AccessListsService, clearAccessList, replaceAccessList } from './modules/access/access-lists.service.ts';
import { ReaderSessions } from './modules/access/reader-session.ts';
import { Mailer } from './platform/mail/mailer.ts';
import { TrackedLinksService } from './modules/analytics/tracked-links.service.ts';
import { LeadFormsService } from './modules/analytics/lead-forms.service.ts';
import { PGLITE_GROUPING, POSTGRES_GROUPING, ReaderEventsService } from './modules/analytics/reader-events.service.ts';
import { Geolocator } from './modules/analytics/geography.ts';
import { OutboundClient } from './platform/outbound/outbound-client.ts';
import { CatalogsService } from './modules/catalogs/catalogs.service.ts';
import { ConnectorService } from './modules/connector/connector.service.ts';
import { AnalyticsQueriesService } from './modules/analytics/analytics-queries.service.ts';
import { ExportsService } from './modules/analytics/exports.service.ts';
import { AnalyticsReader } from './modules/analytics/analytics-sql.ts';
import type { Logger } from 'pino';
import { ContentBooksService } from './modules/content/content-books.service.ts';
import { WebhooksService } from './modules/webhooks/webhooks.service.ts';
import { SecretBox } from './modules/webhooks/secrets.ts';
import { AccountsService } from './modules/people/accounts.service.ts';
import { PasskeysService } from './modules/people/passkeys.service.ts';
import { MembersService } from './modules/people/members.service.ts';
import { AuditTrailService } from './modules/workspaces/audit-trail.service.ts';
import { OAuthService } from './modules/oauth/oauth.service.ts';

export interface Services {
  workspaces: WorkspacesService;
  books: BooksService;
  uploads: UploadsService;
  versions: BookVersionsService;
  bulkSettings: BulkSettingsService;
  brand: BrandService;
  accessLists: AccessListsService;
  readerSessions: ReaderSessions;
  mailer: Mailer;
  trackedLinks: TrackedLinksService;
  leadForms: LeadFormsService;
  readerEvents: ReaderEventsService;
  /** The one client for every outbound request (webhooks, feeds, images): SSRF-safe. */
  outbound: OutboundClient;
  /** Product catalogs, items and sync jobs (read by the content area to render books). */
  catalogs: CatalogsService;
  /** The Shopify connector: compliance webhooks and the one-time workspace name. */
  connector: ConnectorService;
  analytics: AnalyticsQueriesService;
  exports: ExportsService;
  /** Books made from content: templates, editor pages, catalog renders. */
  contentBooks: ContentBooksService;
  /** Webhook subscriptions and deliveries; `webhookSecrets` seals their signing secrets under the service secret. */
  webhooks: WebhooksService;
  webhookSecrets: SecretBox;
  /** People: accounts, sign-in and sessions; passkeys; members and invitations. */
  accounts: AccountsService;
  passkeys: PasskeysService;
  members: MembersService;
  auditTrail: AuditTrailService;
  /** OAuth 2.1 for integrations: the authorization server, apps, consent, tokens (docs/oauth.md). */
  oauth: OAuthService;
}

export function createServices(deps: { database: Database; storage: Storage; queue: JobQueue; config: Readonly<Config>; logger: Logger; secretKey: string }): Services {
  const { database, storage, queue, config } = deps;
  const books = new BooksService({ db: database.db, storage, queue, config });
  const uploads = new UploadsService({ db: database.db, storage, queue, books, tmpDir: path.join(config.dataDir, 'tmp') });
  const outbound = new OutboundClient({ allowedHosts: config.OUTBOUND_ALLOWED_HOSTS });
  const workspaces = new WorkspacesService(database);
  const catalogs = new CatalogsService({
    db: database.db, queue, outbound,
    feedLimits: { maxBytes: config.CATALOG_FEED_MAX_BYTES, maxItems: config.CATALOG_FEED_MAX_ITEMS, timeoutMs: config.CATALOG_FEED_TIMEOUT_MS },
    resyncIntervalMinutes: config.CATALOG_RESYNC_INTERVAL_MINUTES,
  });
  const webhookSecrets = new SecretBox(deps.secretKey);
  const mailer = new Mailer({
    db: database.db,
    logger: deps.logger.child({ component: 'mail' }),
    smtpUrl: config.SMTP_URL,
    from: config.MAIL_FROM,
  });
  const accounts = new AccountsService({
    db: database.db, mailer, publicBaseUrl: config.publicBaseUrl,
    signInLinkTtlMinutes: config.SIGN_IN_LINK_TTL_MINUTES, sessionTtlDays: config.SESSION_TTL_DAYS, passwords: config.AUTH_PASSWORDS,
  });
  return {
    workspaces,
    books,
    uploads,
    versions: new BookVersionsService({ db: database.db, storage, queue, uploads, kept: config.BOOK_VERSIONS_KEPT }),
    accessLists: new AccessListsService({ db: database.db }),
    readerSessions: new ReaderSessions({ secret: deps.secretKey, lifetimeHours: config.READER_SESSION_HOURS, publicBaseUrl: config.publicBaseUrl }),
    trackedLinks: new TrackedLinksService({ db: database.db, publicBaseUrl: config.publicBaseUrl }),
    leadForms: new LeadFormsService({ db: database.db }),
    readerEvents: new ReaderEventsService({ db: database.db, geolocator: new Geolocator(), grouping: database.kind === 'postgres' ? POSTGRES_GROUPING : PGLITE_GROUPING }),
    ...analyticsServices(database, config),
    mailer,
    brand: new BrandService({ db: database.db, storage, publicBaseUrl: config.publicBaseUrl }),
    bulkSettings: new BulkSettingsService({ db: database.db, queue, accessLists: { replace: replaceAccessList, clear: clearAccessList } }),
    outbound,
    catalogs,
    connector: new ConnectorService({ db: database.db, queue, workspaces, catalogs, clientSecret: config.SHOPIFY_CLIENT_SECRET }),
    contentBooks: new ContentBooksService({ db: database.db, storage, queue, books }),
    webhooks: new WebhooksService({ db: database.db, outbound, box: webhookSecrets }),
    webhookSecrets,
    accounts,
    passkeys: new PasskeysService({ db: database.db, publicBaseUrl: config.publicBaseUrl }),
    members: new MembersService({ db: database.db, mailer, accounts, publicBaseUrl: config.publicBaseUrl }),
    auditTrail: new AuditTrailService(database.db),
    oauth: new OAuthService({
      db: database.db, accounts, publicBaseUrl: config.publicBaseUrl, secretKey: deps.secretKey,
      accessTokenTtlSeconds: config.OAUTH_ACCESS_TOKEN_TTL_SECONDS, refreshTokenTtlDays: config.OAUTH_REFRESH_TOKEN_TTL_DAYS,
      dynamicRegistration: config.OAUTH_DYNAMIC_REGISTRATION, trustProxy: Boolean(config.TRUST_PROXY),
    }),
  };
}

function analyticsServices(database: Database, config: Readonly<Config>): Pick<Services, 'analytics' | 'exports'> {
  const analytics = new AnalyticsQueriesService({
    db: database.db, statementTimeoutMs: config.ANALYTICS_STATEMENT_TIMEOUT_MS,
    exactMaxSegments: config.ANALYTICS_EXACT_MAX_SEGMENTS, rollupSettleMs: config.ANALYTICS_ROLLUP_SETTLE_SECONDS * 1000,
  });
  const reader = new AnalyticsReader({ db: database.db, statementTimeoutMs: config.ANALYTICS_STATEMENT_TIMEOUT_MS });
  const copyOut = database.pool && config.EXPORT_COPY_SLOTS > 0 ? new CopyOut({ pool: database.pool, slots: config.EXPORT_COPY_SLOTS }) : null;
  return { analytics, exports: new ExportsService({ analytics, reader, batchRows: config.EXPORT_BATCH_ROWS, copyOut }) };
}
