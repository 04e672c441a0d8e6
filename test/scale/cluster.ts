/**
 * A scaled-out Flipbook on one machine, as the "Scaling out" recipe of
 * docs/self-hosting.md runs it: `flipbook serve --role api` and `--role worker`
 * processes (the real CLI, separate OS processes) sharing one PostgreSQL
 * database, one Redis (a key prefix per run) and one S3-compatible bucket
 * (s3rver on 127.0.0.1, spoken to through the AWS SDK exactly like S3), with a
 * round-robin HTTP proxy in front of the API processes. Used by
 * test/scale/scale-out.scale.ts and bench/api.bench.ts.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import S3rver from 's3rver';
import { freePort, scratchPostgres } from '../helpers.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CLI = path.join(ROOT, 'bin/flipbook.js');

export interface S3Server {
  endpoint: string;
  bucket: string;
  directory: string;
  close(): Promise<void>;
}

export async function startS3(): Promise<S3Server> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'flipbook-s3-'));
  const port = await freePort();
  const server = new S3rver({ port, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: 'flipbook', configs: [] }] });
  await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket: 'flipbook',
    directory,
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** A round-robin reverse proxy: request i goes to target i mod n. Counts what each target answered. */
export interface Proxy {
  url: string;
  answered: number[];
  close(): Promise<void>;
}

export async function startProxy(targets: () => string[]): Promise<Proxy> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const answered: number[] = [];
  let next = 0;
  const server = http.createServer((req, res) => {
    const list = targets();
    const index = next++ % list.length;
    const target = new URL(list[index]!);
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, 'x-forwarded-for': req.socket.remoteAddress ?? '127.0.0.1' }, agent },
      (response) => {
        answered[index] = (answered[index] ?? 0) + 1;
        res.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(res);
      },
    );
    upstream.on('error', () => {
      // The API process died mid-request: the client sees the connection end, as behind a real balancer.
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' }).end('{"error":{"message":"upstream failed","type":"BadGatewayException"}}');
      else res.destroy();
    });
    req.pipe(upstream);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    answered,
    async close() {
      agent.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface FlipbookProcess {
  role: 'api' | 'worker';
  name: string;
  child: ChildProcess;
  url: string | null;
  exited: Promise<number | null>;
}

export interface Cluster {
  databaseUrl: string;
  env: Record<string, string>;
  s3: S3Server;
  proxy: Proxy;
  apis: FlipbookProcess[];
  workers: FlipbookProcess[];
  logDir: string;
  start(role: 'api' | 'worker', name: string, extraEnv?: Record<string, string>): Promise<FlipbookProcess>;
  /** Runs the flipbook CLI against the cluster's database; returns its parsed --json output. */
  cli(args: string[]): unknown;
  stop(): Promise<void>;
}

async function waitForHealth(url: string, child: ChildProcess, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the process exited with ${child.exitCode} before it answered`);
    try {
      const res = await fetch(`${url}/v1/health`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer /v1/health within ${timeoutMs} ms`);
}

export async function startCluster(options: { apis: number; workers: number; redis: boolean; env?: Record<string, string> }): Promise<Cluster> {
  const scratch = await scratchPostgres();
  const s3 = await startS3();
  const logDir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-cluster-'));
  const apis: FlipbookProcess[] = [];
  const workers: FlipbookProcess[] = [];
  /** Every process ever started, so stop() ends them all, even one whose start failed. */
  const spawned: FlipbookProcess[] = [];
  const proxy = await startProxy(() => apis.filter((a) => a.url).map((a) => a.url!));
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const env: Record<string, string> = {
    DATABASE_URL: scratch.url,
    DATABASE_POOL_SIZE: '5',
    ...(options.redis ? { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `flipbook-test:${randomBytes(6).toString('hex')}:` } : {}),
    S3_BUCKET: s3.bucket,
    S3_ENDPOINT: s3.endpoint,
    S3_REGION: 'us-east-1',
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    S3_FORCE_PATH_STYLE: 'true',
    SECRET_KEY: randomBytes(32).toString('hex'),
    PUBLIC_BASE_URL: proxy.url,
    TRUST_PROXY: 'true',
    BOOTSTRAP_WORKSPACE: 'false',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    SHUTDOWN_TIMEOUT_MS: '10000',
    ...options.env,
  };
  // Node's own PATH first: bin/flipbook.js needs Node 24, which npm puts first, and so does this test's process.
  const childEnv = (extra: Record<string, string>) => ({ ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`, ...env, ...extra });

  const cluster: Cluster = {
    databaseUrl: scratch.url,
    env,
    s3,
    proxy,
    apis,
    workers,
    logDir,
    async start(role, name, extraEnv = {}) {
      const port = role === 'api' ? await freePort() : 0;
      const log = createWriteStream(path.join(logDir, `${name}.log`), { flags: 'a' });
      const child = spawn(process.execPath, [CLI, 'serve', '--role', role], {
        cwd: ROOT,
        env: childEnv({ PORT: String(port), DATA_DIR: path.join(logDir, `data-${name}`), ...extraEnv }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout!.pipe(log);
      child.stderr!.pipe(log);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
      const proc: FlipbookProcess = { role, name, child, url: role === 'api' ? `http://127.0.0.1:${port}` : null, exited };
      spawned.push(proc);
      if (role === 'api') {
        await waitForHealth(proc.url!, child);
      } else {
        await new Promise<void>((resolve, reject) => {
          const onData = (chunk: Buffer) => {
            if (chunk.toString().includes('flipbook started')) {
              child.stdout!.off('data', onData);
              resolve();
            }
          };
          child.stdout!.on('data', onData);
          child.once('exit', (code) => reject(new Error(`worker ${name} exited with ${code}`)));
          setTimeout(() => reject(new Error(`worker ${name} did not start within 180 s`)), 180_000).unref();
        });
      }
      return proc;
    },
    cli(args) {
      const result = spawnSync(process.execPath, [CLI, ...args, '--json'], { cwd: ROOT, env: childEnv({ LOG_LEVEL: 'silent' }), encoding: 'utf8' });
      if (result.status !== 0) throw new Error(`flipbook ${args.join(' ')} failed: ${result.stderr}`);
      return JSON.parse(result.stdout);
    },
    async stop() {
      const all = spawned;
      for (const p of all) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
      await Promise.all(all.map((p) => p.exited));
      await proxy.close();
      await s3.close();
      await scratch.drop();
      if (!process.env.KEEP_CLUSTER_LOGS) await rm(logDir, { recursive: true, force: true });
    },
  };
  try {
    // The first process migrates (under the advisory lock the others wait on); the rest start together.
    apis.push(await cluster.start('api', 'api-1'));
    const rest = await Promise.all([
      ...Array.from({ length: options.apis - 1 }, (_, i) => cluster.start('api', `api-${i + 2}`)),
      ...Array.from({ length: options.workers }, (_, i) => cluster.start('worker', `worker-${i + 1}`)),
    ]);
    for (const p of rest) (p.role === 'api' ? apis : workers).push(p);
  } catch (error) {
    await cluster.stop().catch(() => undefined);
    throw error;
  }
  return cluster;
}
