/**
 * Test harness: the real service (same runtime as `flipbook serve`) listening
 * on a free port, on a fresh database: an in-memory PGlite by default, or a
 * scratch database on the PostgreSQL server of DATABASE_URL.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino, { type DestinationStream, type Logger } from 'pino';
import type { FastifyPluginAsync } from 'fastify';
import { loadConfig, type Env } from '../src/platform/config/env.ts';
import type { DatabaseTarget } from '../src/platform/db/database.ts';
import { startRuntime, type BootstrapInfo, type Runtime } from '../src/runtime.ts';
import { createLogger } from '../src/platform/logger.ts';
import { pgliteTemplate, postgresTemplate } from './database-template.ts';

export const usingPostgres = Boolean(process.env.DATABASE_URL);

/** A port nobody listens on now, so the public base URL can be known before the server starts. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A scratch database on the PostgreSQL server, dropped by the returned function: empty, or with `migrated` a copy of
 * the migrated template (database-template.ts).
 */
export async function scratchPostgres(options: { migrated?: boolean } = {}): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = new URL(process.env.DATABASE_URL!);
  const name = `flipbook_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  try {
    for (let attempt = 1; ; attempt++) {
      const template = options.migrated ? await postgresTemplate(base.toString()) : null;
      try {
        await admin.query(`create database ${name}${template ? ` template ${template}` : ''}`);
        break;
      } catch (error) {
        // 55006: the template's last connection (the one that made it) has not quite ended yet.
        // 3D000: another checkout dropped the template as stale between our check and now: it is made again.
        if (!['55006', '3D000'].includes((error as { code?: string }).code ?? '') || attempt === 20) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } finally {
    await admin.end();
  }
  const url = new URL(base.toString());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: base.toString() });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean>;
}

export interface TestService {
  runtime: Runtime;
  url: string;
  dataDir: string;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  /** A workspace with a key (all scopes unless given). */
  workspace(options?: { plan?: string; scopes?: string[]; name?: string }): Promise<{ id: number; key: string; keyId: number }>;
  /** Another key for a workspace. */
  key(workspaceId: number, scopes: string[], mode?: 'live' | 'test'): Promise<{ key: string; id: number }>;
  stop(): Promise<void>;
}

export interface ServiceOptions {
  env?: Partial<Env>;
  worker?: boolean;
  extraRoutes?: FastifyPluginAsync;
  /** Keep the database on disk under dataDir (to restart on it). */
  dataDir?: string;
  database?: DatabaseTarget;
  adminChannel?: boolean;
  /** Receives what the first start prints (with BOOTSTRAP_WORKSPACE: true). */
  onBootstrap?: (info: BootstrapInfo) => void;
  /** A logger to capture the service's logs (default: silent). */
  logger?: Logger;
  /** Write every log line (level trace) through the service's own logger to this stream (see test/security/log-capture.ts). */
  logStream?: DestinationStream;
}

export async function startService(options: ServiceOptions = {}): Promise<TestService> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'flipbook-test-')));
  let dropDatabase: (() => Promise<void>) | null = null;
  let database = options.database;
  if (!database) {
    if (usingPostgres) {
      const scratch = await scratchPostgres({ migrated: true });
      dropDatabase = scratch.drop;
      database = { kind: 'postgres', url: scratch.url, poolSize: 5 };
    } else {
      // On disk (a test that restarts the service on the same data), the first start makes its database itself.
      database = options.dataDir ? { kind: 'pglite', dataDir: path.join(dataDir, 'pglite') } : { kind: 'pglite', dataDir: 'memory', template: await pgliteTemplate() };
    }
  }
  const port = await freePort();
  const config = loadConfig({}, {
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: port,
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: 'silent',
    BOOTSTRAP_WORKSPACE: false,
    SHUTDOWN_TIMEOUT_MS: 3000,
    ...options.env,
  });
  const runtime = await startRuntime(config, {
    api: true,
    worker: options.worker ?? true,
    database,
    logger: options.logger ?? (options.logStream ? createLogger({ LOG_LEVEL: 'trace', LOG_PRETTY: false }, options.logStream) : pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' })),
    adminChannel: options.adminChannel ?? false,
    extraRoutes: options.extraRoutes,
    onBootstrap: options.onBootstrap,
  });
  const url = runtime.url!;

  const service: TestService = {
    runtime,
    url,
    dataDir,
    async request(method, route, opts = {}) {
      const target = new URL(url + route);
      for (const [k, v] of Object.entries(opts.query ?? {})) target.searchParams.set(k, String(v));
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.key) headers.authorization = `Bearer ${opts.key}`;
      let body: string | undefined;
      if (opts.body !== undefined) {
        body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await fetch(target, { method, headers, body });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      return { status: response.status, headers: response.headers, body: parsed as never, text };
    },
    async workspace(o = {}) {
      const ws = await runtime.services.workspaces.createWorkspace({ name: o.name ?? `Workspace ${Math.random().toString(36).slice(2, 8)}`, plan: o.plan ?? 'company' });
      const key = await runtime.services.workspaces.createKey({ workspaceId: ws.id, scopes: o.scopes ?? ['*'] });
      return { id: ws.id, key: key.key, keyId: key.id };
    },
    async key(workspaceId, scopes, mode = 'live') {
      const key = await runtime.services.workspaces.createKey({ workspaceId, scopes, mode });
      return { key: key.key, id: key.id };
    },
    async stop() {
      await runtime.stop();
      if (dropDatabase) await dropDatabase();
      // A rendition still being written as the service stops can refill a folder while it is removed: retry.
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
  return service;
}

/**
 * Rate limits count fixed windows aligned to the clock (a minute, an hour): a
 * test that expects an exact count must not straddle a window's end, or its
 * hits split between two windows and neither fills. Waits for the next window
 * when less than `needMs` of the current one is left.
 */
export async function roomInRateLimitWindow(windowMs = 60_000, needMs = 15_000): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < needMs) await new Promise((r) => setTimeout(r, left + 50));
}

/** Polls `check` until it returns a truthy value or the time runs out. */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, { timeoutMs = 20_000, intervalMs = 100 } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`Condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
}

/** POSTs one file as multipart/form-data to /v1/books (fields first, then files[]). */
/** A multipart/form-data request with the workspace key: fields, then at most one file. */
export async function sendMultipart(
  svc: TestService, key: string, method: string, route: string, fields: Record<string, string>,
  file?: { field: string; bytes: Buffer; name: string }, headers: Record<string, string> = {},
): Promise<ApiResponse> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file) form.append(file.field, new Blob([new Uint8Array(file.bytes)]), file.name);
  const response = await fetch(`${svc.url}${route}`, { method, headers: { authorization: `Bearer ${key}`, ...headers }, body: form });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep text
  }
  return { status: response.status, headers: response.headers, body, text };
}

export async function uploadFile(svc: TestService, key: string, file: Buffer, filename: string, fields: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<ApiResponse> {
  return sendMultipart(svc, key, 'POST', '/v1/books', fields, { field: 'files[]', bytes: file, name: filename }, headers);
}

/** Uploads a document (published by default) and waits for its batch to end: the batch and the book's random id. */
export async function convertDocument(svc: TestService, key: string, bytes: Uint8Array, filename: string, fields: Record<string, string> = { status: 'publish' }): Promise<{ batch: any; book: string }> {
  const res = await uploadFile(svc, key, Buffer.from(bytes), filename, fields);
  if (res.status !== 202) throw new Error(`upload of ${filename} answered ${res.status}: ${res.text}`);
  const batch = await waitForBatch(svc, key, res.body.data.batch_id);
  return { batch, book: batch.books[0].random_id as string };
}

/** Polls a batch until it leaves queued/processing. */
export async function waitForBatch(svc: TestService, key: string, batchId: string, timeoutMs = 120_000): Promise<any> {
  return eventually(async () => {
    const res = await svc.request('GET', `/v1/batches/${batchId}`, { key });
    return ['completed', 'failed', 'cancelled'].includes(res.body?.data?.status) ? res.body.data : null;
  }, { timeoutMs, intervalMs: 200 });
}
