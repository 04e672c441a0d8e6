/**
 * How the CLI reaches the data safely:
 * - PostgreSQL (DATABASE_URL): directly; the server takes many connections.
 * - Embedded, service running: through the service's admin socket.
 * - Embedded, service stopped: opens the database itself, holding the lock.
 * - Embedded, lock held but no socket answers: refuses, never opening the files twice.
 */
import { adminSocketPath, callAdmin } from '../platform/admin/admin-channel.ts';
import { createAdminCommands } from '../admin-commands.ts';
import type { Config } from '../platform/config/env.ts';
import { lockHolder } from '../platform/db/data-dir-lock.ts';
import { createLogger } from '../platform/logger.ts';
import { startRuntime, type Runtime } from '../runtime.ts';

export interface AdminClient {
  via: 'service' | 'direct';
  /** `timeoutMs`: how long a command through the service may take (30 s by default; a backup's snapshot takes longer). */
  run(command: string, args?: Record<string, unknown>, timeoutMs?: number): Promise<unknown>;
  close(): Promise<void>;
}

function isNoListener(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ECONNREFUSED';
}

async function direct(config: Readonly<Config>): Promise<AdminClient> {
  const runtime: Runtime = await startRuntime({ ...config, BOOTSTRAP_WORKSPACE: false }, {
    api: false,
    worker: false,
    adminChannel: false,
    logger: createLogger({ LOG_LEVEL: 'warn', LOG_PRETTY: false }),
  });
  const commands = createAdminCommands(runtime.services, runtime.database);
  return {
    via: 'direct',
    async run(command, args = {}) {
      const fn = commands[command];
      if (!fn) throw new Error(`Unknown admin command ${command}`);
      return fn(args);
    },
    close: () => runtime.stop(),
  };
}

export async function connectAdmin(config: Readonly<Config>): Promise<AdminClient> {
  if (config.database.kind === 'postgres') return direct(config);
  const socket = adminSocketPath(config.dataDir);
  try {
    await callAdmin(socket, 'workspaces.list', {});
    return { via: 'service', run: (command, args = {}, timeoutMs) => callAdmin(socket, command, args, timeoutMs), close: async () => undefined };
  } catch (error) {
    if (!isNoListener(error)) throw error;
  }
  const holder = lockHolder(config.dataDir);
  if (holder !== null) {
    throw new Error(
      `The service (pid ${holder}) holds the embedded database in ${config.dataDir} but its admin socket does not answer. ` +
        'Wait until it has started, or stop it, and try again.',
    );
  }
  return direct(config);
}
