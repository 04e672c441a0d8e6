/**
 * A local admin channel: JSON commands over a unix socket in DATA_DIR (mode
 * 0600, so only the service's user can talk to it). The embedded database
 * admits one process, so while the service runs, `flipbook` CLI commands are
 * executed by the service itself through this channel.
 */
import { chmod, rm } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import type { Logger } from 'pino';
import { isAppError } from '../errors.ts';

export type AdminCommands = Record<string, (args: Record<string, unknown>) => Promise<unknown>>;

export function adminSocketPath(dataDir: string): string {
  return path.join(dataDir, 'admin.sock');
}

const MAX_BODY = 64 * 1024;

export class AdminChannel {
  private server: http.Server | null = null;
  private socketPath = '';
  private readonly commands: AdminCommands;
  private readonly log: Logger;

  constructor(commands: AdminCommands, log: Logger) {
    this.commands = commands;
    this.log = log;
  }

  async listen(socketPath: string): Promise<void> {
    this.socketPath = socketPath;
    await rm(socketPath, { force: true });
    this.server = http.createServer((request, response) => void this.handle(request, response));
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(socketPath, resolve);
    });
    await chmod(socketPath, 0o600);
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    try {
      let raw = '';
      for await (const chunk of request) {
        raw += chunk;
        if (raw.length > MAX_BODY) return reply(413, { error: { message: 'Command too large', type: 'PayloadTooLargeException' } });
      }
      const { command, args } = JSON.parse(raw || '{}') as { command?: string; args?: Record<string, unknown> };
      const run = command ? this.commands[command] : undefined;
      if (!run) return reply(404, { error: { message: `Unknown admin command ${JSON.stringify(command)}`, type: 'RouteNotFoundException' } });
      this.log.info({ command }, 'admin command');
      reply(200, { data: await run(args ?? {}) });
    } catch (error) {
      if (isAppError(error)) return reply(error.status, { error: { message: error.message, type: error.type, details: error.details } });
      this.log.error({ err: error }, 'admin command failed');
      reply(500, { error: { message: (error as Error).message, type: 'InternalServerError' } });
    }
  }

  async close(): Promise<void> {
    if (!this.server) return;
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = null;
    await rm(this.socketPath, { force: true });
  }
}

export class AdminCommandError extends Error {
  override name = 'AdminCommandError';
  readonly type: string;
  readonly details: Record<string, string[]> | undefined;
  constructor(message: string, type: string, details?: Record<string, string[]>) {
    super(message);
    this.type = type;
    this.details = details;
  }
}

/** Sends one command to a running service; rejects with ECONNREFUSED/ENOENT when none listens. */
export function callAdmin(socketPath: string, command: string, args: Record<string, unknown>, timeoutMs = 30_000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const request = http.request({ socketPath, path: '/', method: 'POST', headers: { 'content-type': 'application/json' }, timeout: timeoutMs }, (response) => {
      let raw = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (raw += chunk));
      response.on('end', () => {
        try {
          const body = JSON.parse(raw) as { data?: unknown; error?: { message: string; type: string; details?: Record<string, string[]> } };
          if (body.error) reject(new AdminCommandError(body.error.message, body.error.type, body.error.details));
          else resolve(body.data);
        } catch (error) {
          reject(error);
        }
      });
    });
    request.on('timeout', () => request.destroy(new Error(`The service did not answer the admin command within ${Math.round(timeoutMs / 1000)} s`)));
    request.on('error', reject);
    request.end(JSON.stringify({ command, args }));
  });
}
