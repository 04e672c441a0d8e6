/**
 * npm run bench:api-cpu — the service's own CPU time per `GET /v1/me` over a
 * fixed number of requests (autocannon, 50 connections), beside the bare
 * Fastify route of bench:api returning the same JSON. CPU time per request is
 * what a shared, busy machine distorts least (req/s swings with whatever else
 * runs); the ratio bare/service is the req/s ratio a quiet machine would show
 * when the service is the bottleneck. A third peer, the bare route sending the
 * service's response headers, tells what those headers cost.
 *
 *   BENCH_REQUESTS=20000 BENCH_ROUNDS=3 BENCH_MODES=pglite,postgres,postgres-redis npm run bench:api-cpu
 *   SERVER_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" for a profile of each peer (Linux only: reads /proc).
 */
import autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { API_SERVER, startPeer as startServer, stopPeer } from './peers.ts';

const requests = Number(process.env.BENCH_REQUESTS ?? 20_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const modes = (process.env.BENCH_MODES ?? 'pglite,postgres,postgres-redis').split(',');
const serverFlags = (process.env.SERVER_NODE_OPTIONS ?? '').split(' ').filter(Boolean);
process.env.DATABASE_URL ||= 'postgres://postgres@127.0.0.1:5432/test';
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(' ');

const startPeer = (args: string[]) => startServer(args, API_SERVER, serverFlags);

/** User + system CPU time of a process, in µs (clock ticks of /proc/<pid>/stat). */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * (1e6 / 100);
}

/** µs of the peer's CPU per request and the req/s, over `requests` requests after a warm-up. */
async function measure(peer: { url: string; key: string; child: ChildProcess }): Promise<{ us: number; rps: number }> {
  const headers = peer.key ? { authorization: `Bearer ${peer.key}` } : {};
  await autocannon({ url: `${peer.url}/v1/me`, connections: 50, amount: 5000, headers });
  const before = cpuMicros(peer.child.pid!);
  const result = await autocannon({ url: `${peer.url}/v1/me`, connections: 50, amount: requests, headers });
  const after = cpuMicros(peer.child.pid!);
  if (result.non2xx + result.errors > 0) throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`);
  return { us: (after - before) / requests, rps: result.requests.average };
}

process.stdout.write(`${requests} requests per measurement, ${rounds} rounds; load average ${load()}\n`);
process.stdout.write('mode            round  service µs/req  bare µs/req  bare/service  bare+headers µs/req  service req/s  bare req/s  ratio  load\n');
for (const mode of modes) {
  for (let round = 1; round <= rounds; round++) {
    const peer = await startPeer([mode]);
    const response = await fetch(`${peer.url}/v1/me`, { headers: { authorization: `Bearer ${peer.key}` } });
    const sample = await response.text();
    const sent = Object.fromEntries([...response.headers].filter(([name]) => !['content-type', 'content-length', 'date', 'connection', 'keep-alive'].includes(name)));
    const service = await measure(peer);
    await stopPeer(peer);
    const bare = await startPeer(['bare', sample]);
    const reference = await measure(bare);
    await stopPeer(bare);
    const bareHeaders = await startPeer(['bare', sample, JSON.stringify(sent)]);
    const withHeaders = await measure(bareHeaders);
    await stopPeer(bareHeaders);
    process.stdout.write(
      `${mode.padEnd(15)} ${String(round).padStart(5)} ${service.us.toFixed(1).padStart(15)} ${reference.us.toFixed(1).padStart(12)} ${`${(reference.us / service.us * 100).toFixed(0)}%`.padStart(13)} ${withHeaders.us.toFixed(1).padStart(20)}` +
        ` ${service.rps.toFixed(0).padStart(14)} ${reference.rps.toFixed(0).padStart(11)} ${`${(service.rps / reference.rps * 100).toFixed(0)}%`.padStart(6)}  ${load()}\n`,
    );
  }
}
