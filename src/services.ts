/** The domain services, built once per process from the platform pieces. */
import type { Database } from './platform/db/database.ts';
import type { Storage } from './platform/storage/storage.ts';
import type { JobQueue } from './platform/jobs/queue.ts';
import type { Config } from './platform/config/env.ts';
import path from 'node:path';
import { WorkspacesService } from './modules/workspaces/workspaces.service.ts';
import { BooksService } from './modules/books/books.service.ts';
import { UploadsService } from './modules/books/uploads.service.ts';
import { BulkSettingsService } from './modules/books/bulk-settings.service.ts';
import { BrandService } from './modules/brand/brand.service.ts';
import { AccessListsService, clearAccessList, replaceAccessList } from './modules/access/access-lists.service.ts';
import { ReaderSessions } from './modules/access/reader-session.ts';
import { Mailer } from './platform/mail/mailer.ts';
import { TrackedLinksService } from './modules/analytics/tracked-links.service.ts';
import { LeadFormsService } from './modules/analytics/lead-forms.service.ts';
import { ReaderEventsService } from './modules/analytics/reader-events.service.ts';
import { Geolocator } from './modules/analytics/geography.ts';
import type { Logger } from 'pino';

export interface Services {
  workspaces: WorkspacesService;
  books: BooksService;
  uploads: UploadsService;
  bulkSettings: BulkSettingsService;
  brand: BrandService;
  accessLists: AccessListsService;
  readerSessions: ReaderSessions;
  mailer: Mailer;
  trackedLinks: TrackedLinksService;
  leadForms: LeadFormsService;
  readerEvents: ReaderEventsService;
}

export function createServices(deps: { database: Database; storage: Storage; queue: JobQueue; config: Readonly<Config>; logger: Logger; secretKey: string }): Services {
  const { database, storage, queue, config } = deps;
  const books = new BooksService({ db: database.db, storage, queue, config });
  return {
    workspaces: new WorkspacesService(database),
    books,
    uploads: new UploadsService({ db: database.db, storage, queue, books, tmpDir: path.join(config.dataDir, 'tmp') }),
    accessLists: new AccessListsService({ db: database.db }),
    readerSessions: new ReaderSessions({ secret: deps.secretKey, lifetimeHours: config.READER_SESSION_HOURS, publicBaseUrl: config.publicBaseUrl }),
    trackedLinks: new TrackedLinksService({ db: database.db, publicBaseUrl: config.publicBaseUrl }),
    leadForms: new LeadFormsService({ db: database.db }),
    readerEvents: new ReaderEventsService({ db: database.db, geolocator: new Geolocator() }),
    mailer: new Mailer({
      db: database.db,
      logger: deps.logger.child({ component: 'mail' }),
      smtpUrl: config.SMTP_URL,
      from: config.MAIL_FROM,
    }),
    brand: new BrandService({ db: database.db, storage, publicBaseUrl: config.publicBaseUrl }),
    bulkSettings: new BulkSettingsService({ db: database.db, queue, accessLists: { replace: replaceAccessList, clear: clearAccessList } }),
  };
}
