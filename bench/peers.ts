/**
 * The processes the API benchmarks load (bench:api, bench:api-cpu): a
 * server script started as a child, which prints one JSON line ({ url, key })
 * once it listens, and is stopped with SIGTERM. Each peer runs in a process
 * of its own so the load generator never shares its thread.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

export interface Peer { url: string; key: string; /** An OAuth access token of the key's workspace (the service's peers). */ oauthToken?: string; child: ChildProcess }

/** bench/api-server.ts: the service in one mode (pglite, postgres, postgres-redis), or `bare <json>`. */
export const API_SERVER = path.join(import.meta.dirname, 'api-server.ts');

export async function startPeer(args: string[], script = API_SERVER, nodeFlags: string[] = []): Promise<Peer> {
  const child = spawn(process.execPath, [...nodeFlags, script, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`benchmark server exited with ${code}`)));
  });
  return { ...(JSON.parse(line) as { url: string; key: string; oauthToken?: string }), child };
}

export async function stopPeer(peer: { child: ChildProcess }): Promise<void> {
  if (peer.child.exitCode !== null) return;
  const exited = new Promise((resolve) => peer.child.once('exit', resolve));
  peer.child.kill('SIGTERM');
  await exited;
}
