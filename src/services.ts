/** The domain services, built once per process from the platform pieces. */
import type { Database } from './platform/db/database.ts';
import type { Storage } from './platform/storage/storage.ts';
import type { JobQueue } from './platform/jobs/queue.ts';
import type { Config } from './platform/config/env.ts';
import { WorkspacesService } from './modules/workspaces/workspaces.service.ts';

export interface Services {
  workspaces: WorkspacesService;
}

export function createServices(deps: { database: Database; storage: Storage; queue: JobQueue; config: Readonly<Config> }): Services {
  return {
    workspaces: new WorkspacesService(deps.database),
  };
}
