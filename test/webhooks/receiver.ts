/**
 * A real webhook receiver on 127.0.0.1 for tests and the benchmark: records
 * every request (headers and raw body), answers as `respond` says, and can
 * verify Standard Webhooks signatures with the unmodified `standardwebhooks`
 * package.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

export interface Reply {
  status: number;
  body?: string;
  headers?: Record<string, string>;
  delayMs?: number;
  /** Answer only once this settles (a receiver that holds its requests). */
  until?: Promise<unknown>;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** How to answer a request (default 200 "ok"). */
  respond: (request: Received) => Reply;
  /** Received requests of one event id. */
  of(eventId: string): Received[];
  /** The most requests to this path that were open (received, connection not yet answered or closed) at once. */
  maxOpen(path: string): number;
  close(): Promise<void>;
}

export async function startReceiver(respond: (request: Received) => Reply = () => ({ status: 200, body: 'ok' })): Promise<Receiver> {
  const received: Received[] = [];
  const receiver = { url: '', received, respond } as Receiver;
  const open = new Map<string, number>();
  const maxOpen = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    open.set(path, (open.get(path) ?? 0) + 1);
    maxOpen.set(path, Math.max(maxOpen.get(path) ?? 0, open.get(path)!));
    res.on('close', () => open.set(path, open.get(path)! - 1));
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: Received = { path: req.url ?? '/', headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(request);
      const reply = receiver.respond(request);
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? '');
      };
      if (reply.until) void reply.until.finally(answer);
      else if (reply.delayMs) setTimeout(answer, reply.delayMs);
      else answer();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.of = (eventId) => received.filter((r) => r.headers['webhook-id'] === eventId);
  receiver.maxOpen = (path) => maxOpen.get(path) ?? 0;
  receiver.close = () => new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return receiver;
}

/** Verifies a received request with the standardwebhooks package; returns the parsed payload or throws. */
export function verify(secret: string, request: Received): unknown {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': request.headers['webhook-id']!,
    'webhook-timestamp': request.headers['webhook-timestamp']!,
    'webhook-signature': request.headers['webhook-signature']!,
  });
}
