/** The domain services, built once per process from the platform pieces. */
import type { Database } from './platform/db/database.ts';
import type { Storage } from './platform/storage/storage.ts';
import type { JobQueue } from './platform/jobs/queue.ts';
import type { Config } from './platform/config/env.ts';
import path from 'node:path';
import { WorkspacesService } from './modules/workspaces/workspaces.service.ts';
import { BooksService } from './modules/books/books.service.ts';
import { UploadsService } from './modules/books/uploads.service.ts';

export interface Services {
  workspaces: WorkspacesService;
  books: BooksService;
  uploads: UploadsService;
}

export function createServices(deps: { database: Database; storage: Storage; queue: JobQueue; config: Readonly<Config> }): Services {
  const { database, storage, queue, config } = deps;
  const books = new BooksService({ db: database.db, storage, queue, config });
  return {
    workspaces: new WorkspacesService(database),
    books,
    uploads: new UploadsService({ db: database.db, storage, queue, books, tmpDir: path.join(config.dataDir, 'tmp') }),
  };
}
