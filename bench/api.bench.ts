/**
 * npm run bench:api — requests per second of GET /v1/me (key lookup, rate
 * limit counters, workspace read, schema serialisation) at 50 connections,
 * beside a bare Fastify route returning the same JSON, measured in the same
 * run, on the embedded database, on PostgreSQL, on PostgreSQL with Redis, and
 * with two API processes behind a round-robin proxy (PostgreSQL and Redis).
 *
 *   BENCH_SECONDS=10 DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:api
 */
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { startCluster } from '../test/scale/cluster.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = 50;
const server = path.join(import.meta.dirname, 'api-server.ts');
process.env.DATABASE_URL ||= 'postgres://postgres@127.0.0.1:5432/test';

async function startPeer(args: string[]): Promise<{ url: string; key: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [server, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`benchmark server exited with ${code}`)));
  });
  return { ...(JSON.parse(line) as { url: string; key: string }), child };
}

async function load(label: string, url: string, key: string): Promise<{ rps: number; p99: number; errors: number }> {
  const headers = key ? { authorization: `Bearer ${key}` } : {};
  // Warm up (JIT, connection pools), then measure.
  await autocannon({ url: `${url}/v1/me`, connections, duration: 2, headers });
  process.stdout.write(`  ${label}: measuring ${seconds}s at ${connections} connections…\n`);
  const result = await autocannon({ url: `${url}/v1/me`, connections, duration: seconds, headers });
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.non2xx + result.errors };
}

const rows: { mode: string; target: string; rps: number; p99: number; errors: number }[] = [];
const modes = (process.env.BENCH_MODES ?? 'pglite,postgres,postgres-redis,cluster').split(',');
for (const mode of ['pglite', 'postgres', 'postgres-redis'].filter((m) => modes.includes(m))) {
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
  peer.child.kill('SIGTERM');
  await new Promise((r) => peer.child.once('exit', r));

  const bare = await startPeer(['bare', sample]);
  const reference = await load('bare Fastify, same JSON', bare.url, '');
  bare.child.kill('SIGTERM');
  rows.push({ mode, target: 'GET /v1/me', ...service }, { mode, target: 'bare Fastify route', ...reference });
}

// Two API processes (`flipbook serve --role api`) behind the round-robin proxy, on PostgreSQL and Redis, beside one.
if (modes.includes('cluster')) try {
  process.stdout.write('\n[2 API processes + proxy, postgres-redis] starting the cluster…\n');
  const cluster = await startCluster({ apis: 2, workers: 0, redis: true, env: { LOG_LEVEL: 'warn', RATE_LIMIT_WORKSPACE_PER_MINUTE: '100000000', RATE_LIMIT_ENDPOINT_PER_MINUTE: '100000000' } });
  try {
    const ws = cluster.cli(['workspaces', 'create', '--name', 'Bench', '--plan', 'company']) as { id: number };
    const clusterKey = (cluster.cli(['keys', 'create', '--workspace', String(ws.id)]) as { key: string }).key;
    const sample = await (await fetch(`${cluster.proxy.url}/v1/me`, { headers: { authorization: `Bearer ${clusterKey}` } })).text();
    const one = await load('one API process (direct)', cluster.apis[0]!.url!, clusterKey);
    const two = await load('two API processes behind the proxy', cluster.proxy.url, clusterKey);
    const bare = await startPeer(['bare', sample]);
    const reference = await load('bare Fastify, same JSON', bare.url, '');
    bare.child.kill('SIGTERM');
    rows.push({ mode: 'cluster', target: '1 API process', ...one }, { mode: 'cluster', target: 'bare Fastify route', ...reference });
    rows.push({ mode: 'cluster', target: '2 API + proxy', ...two }, { mode: 'cluster', target: 'bare Fastify route', ...reference });
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
