/**
 * Benchmark peer: the real service (runtime as `flipbook serve`, API only) or a
 * bare Fastify route returning the same JSON. Prints `{ url, key, oauthToken }`
 * as one JSON line when ready.
 */
import Fastify from 'fastify';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/platform/config/env.ts';
import { startRuntime } from '../src/runtime.ts';
import { scratchPostgres } from '../test/helpers.ts';
import { benchOAuthToken } from './oauth-token.ts';

let mode = process.argv[2] ?? 'pglite';

if (mode === 'bare') {
  const body = process.argv[3] ?? '{}';
  // Optional: the service's response headers (bench:api-cpu's "bare + headers"), to tell their cost from the rest.
  const headers = JSON.parse(process.argv[4] ?? '{}') as Record<string, string>;
  const app = Fastify({ logger: false });
  app.get('/v1/me', async (_request, reply) => reply.headers(headers).type('application/json; charset=utf-8').send(body));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}`, key: '' })}\n`);
  // Exit through process.exit, so a `--cpu-prof` profile is written.
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
} else {
  // `<mode>-metrics`: the same service with its metrics on (METRICS_TOKEN), to measure what they cost.
  const withMetrics = mode.endsWith('-metrics');
  if (withMetrics) mode = mode.slice(0, -'-metrics'.length);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-bench-'));
  const scratch = mode.startsWith('postgres') ? await scratchPostgres() : null;
  const config = loadConfig({}, {
    DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: 0, LOG_LEVEL: 'silent', BOOTSTRAP_WORKSPACE: false,
    RATE_LIMIT_WORKSPACE_PER_MINUTE: 100_000_000, RATE_LIMIT_ENDPOINT_PER_MINUTE: 100_000_000,
    ...(withMetrics ? { METRICS_TOKEN: 'bench-metrics-token' } : {}),
    ...(mode === 'postgres-redis' ? { REDIS_URL: process.env.REDIS_URL || 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: `flipbook-bench:${process.pid}:` } : {}),
  });
  const runtime = await startRuntime(config, {
    api: true,
    worker: false,
    database: scratch ? { kind: 'postgres', url: scratch.url, poolSize: 10 } : { kind: 'pglite', dataDir: path.join(dataDir, 'pglite') },
    logger: pino({ level: 'silent' }),
  });
  const ws = await runtime.services.workspaces.createWorkspace({ name: 'Bench', plan: 'company' });
  const key = await runtime.services.workspaces.createKey({ workspaceId: ws.id, scopes: ['*'] });
  // An OAuth access token of the same workspace, for GET /v1/me with a token beside the key (bench:api).
  const oauthToken = await benchOAuthToken(runtime, ws.id);
  process.stdout.write(`${JSON.stringify({ url: runtime.url, key: key.key, oauthToken })}\n`);
  const stop = async () => {
    await runtime.stop();
    await scratch?.drop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
}
