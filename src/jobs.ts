/** Every background job of the service, with its handler. The queue refuses a name registered twice. */
import type { Database } from './platform/db/database.ts';
import type { JobDefinition } from './platform/jobs/queue.ts';
import { maintenanceJob } from './platform/jobs/maintenance.job.ts';
import type { Services } from './services.ts';

export function createJobDefinitions(deps: { database: Database; services: Services }): JobDefinition[] {
  return [maintenanceJob(deps.database.db)] as JobDefinition[];
}
