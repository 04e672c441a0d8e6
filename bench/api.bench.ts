/**
 * npm run bench:api — requests per second and p99 of GET /v1/me (key lookup, and
 * with an OAuth access token in the same run;
 * rate limit counters, schema serialisation) at 50 connections, beside a bare
 * Fastify route returning the same JSON, measured in the same run, on the
 * embedded database, on PostgreSQL, on PostgreSQL with Redis, and with two API
 * processes (`flipbook serve --role api`, PostgreSQL and Redis) beside one:
 * behind the scale test's round-robin proxy run in a process of its own, and
 * with the client alternating between them (no proxy).
 *
 *   BENCH_SECONDS=10 DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:api
 *   BENCH_MODES=pglite,postgres,postgres-redis,cluster (the default); add pglite-metrics,
 *   postgres-metrics or postgres-redis-metrics for the same with the metrics on (METRICS_TOKEN)
 */
import autocannon from 'autocannon';
import path from 'node:path';
import { startCluster } from '../test/scale/cluster.ts';
import { startPeer, stopPeer } from './peers.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = 50;
process.env.DATABASE_URL ||= 'postgres://postgres@127.0.0.1:5432/test';

type Result = { rps: number; p99: number; errors: number };

/** Loads every URL at once (connections split between them) and sums: the client alternating between processes. */
async function load(label: string, urls: string | string[], key: string): Promise<Result> {
  const list = Array.isArray(urls) ? urls : [urls];
  const headers = key ? { authorization: `Bearer ${key}` } : {};
  const each = Math.round(connections / list.length);
  // Warm up (JIT, connection pools), then measure.
  await Promise.all(list.map((url) => autocannon({ url: `${url}/v1/me`, connections: each, duration: 2, headers })));
  process.stdout.write(`  ${label}: measuring ${seconds}s at ${connections} connections…\n`);
  const results = await Promise.all(list.map((url) => autocannon({ url: `${url}/v1/me`, connections: each, duration: seconds, headers })));
  return {
    rps: results.reduce((sum, r) => sum + r.requests.average, 0),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    errors: results.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
  };
}

const rows: ({ mode: string; target: string } & Result)[] = [];
const modes = (process.env.BENCH_MODES ?? 'pglite,postgres,postgres-redis,cluster').split(',');
// `<mode>-metrics` (e.g. BENCH_MODES=postgres,postgres-metrics): the same service with its metrics on, in the same run.
for (const mode of ['pglite', 'pglite-metrics', 'postgres', 'postgres-metrics', 'postgres-redis', 'postgres-redis-metrics'].filter((m) => modes.includes(m))) {
  process.stdout.write(`\n[${mode}] starting the service…\n`);
  let peer;
  try {
    peer = await startPeer([mode]);
  } catch (error) {
    process.stdout.write(`  skipped: ${(error as Error).message}\n`);
    continue;
  }
  const sample = await (await fetch(`${peer.url}/v1/me`, { headers: { authorization: `Bearer ${peer.key}` } })).text();
  const service = await load('GET /v1/me (service)', peer.url, peer.key);
  // The same call with an OAuth access token (one query per request: token, app, membership), in the same run.
  const withToken = peer.oauthToken ? await load('GET /v1/me (OAuth token)', peer.url, peer.oauthToken) : null;
  await stopPeer(peer);

  const bare = await startPeer(['bare', sample]);
  const reference = await load('bare Fastify, same JSON', bare.url, '');
  await stopPeer(bare);
  rows.push({ mode, target: 'GET /v1/me', ...service }, { mode, target: 'bare Fastify route', ...reference });
  if (withToken) rows.push({ mode, target: 'GET /v1/me (OAuth)', ...withToken }, { mode, target: 'bare Fastify route', ...reference });
}

// Two API processes (`flipbook serve --role api`) behind the round-robin proxy, on PostgreSQL and Redis, beside one.
if (modes.includes('cluster')) try {
  process.stdout.write('\n[2 API processes + proxy, postgres-redis] starting the cluster…\n');
  const cluster = await startCluster({ apis: 2, workers: 0, redis: true, env: { LOG_LEVEL: 'warn', RATE_LIMIT_WORKSPACE_PER_MINUTE: '100000000', RATE_LIMIT_ENDPOINT_PER_MINUTE: '100000000' } });
  try {
    const ws = cluster.cli(['workspaces', 'create', '--name', 'Bench', '--plan', 'company']) as { id: number };
    const clusterKey = (cluster.cli(['keys', 'create', '--workspace', String(ws.id)]) as { key: string }).key;
    const sample = await (await fetch(`${cluster.proxy.url}/v1/me`, { headers: { authorization: `Bearer ${clusterKey}` } })).text();
    const apiUrls = cluster.apis.map((a) => a.url!);
    const one = await load('one API process (direct)', apiUrls[0]!, clusterKey);
    // The scale test's proxy, in a process of its own (in this process it would share the load generator's thread).
    const proxy = await startPeer(apiUrls, path.join(import.meta.dirname, 'proxy.ts'));
    const two = await load('two API processes behind the proxy', proxy.url, clusterKey);
    await stopPeer(proxy);
    const split = await load('two API processes, client alternating', apiUrls, clusterKey);
    const bare = await startPeer(['bare', sample]);
    const reference = await load('bare Fastify, same JSON', bare.url, '');
    await stopPeer(bare);
    rows.push({ mode: 'cluster', target: '1 API process', ...one }, { mode: 'cluster', target: 'bare Fastify route', ...reference });
    rows.push({ mode: 'cluster', target: '2 API + proxy', ...two }, { mode: 'cluster', target: 'bare Fastify route', ...reference });
    rows.push({ mode: 'cluster', target: '2 API, no proxy', ...split }, { mode: 'cluster', target: 'bare Fastify route', ...reference });
  } finally {
    await cluster.stop();
  }
} catch (error) {
  process.stdout.write(`  skipped: ${(error as Error).message}\n`);
}

process.stdout.write('\nmode            target                req/s      p99 ms  non-2xx   service/bare\n');
for (let i = 0; i < rows.length; i += 2) {
  const [service, bare] = [rows[i]!, rows[i + 1]!];
  for (const row of [service, bare]) {
    process.stdout.write(
      `${row.mode.padEnd(15)} ${row.target.padEnd(20)} ${row.rps.toFixed(0).padStart(8)} ${String(row.p99).padStart(9)} ${String(row.errors).padStart(8)}` +
        (row === service ? `   ${(service.rps / bare.rps * 100).toFixed(0)}%` : '') + '\n',
    );
  }
}
