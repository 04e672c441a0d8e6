/**
 * A real HTTP server on 127.0.0.1 that answers from a script, for the
 * client's retry tests: each request is recorded (method, path, headers,
 * body) and answered by the next step; `drop` closes the connection without
 * an answer (a network error for the client).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

export type Step = { status: number; headers?: Record<string, string>; body?: unknown } | 'drop';

export interface ScriptedServer {
  url: string;
  requests: Recorded[];
  close(): Promise<void>;
}

/** Answers request n with steps[n], and every request past the script with the last step. */
export async function startScripted(steps: Step[]): Promise<ScriptedServer> {
  const requests: Recorded[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ method: req.method!, path: req.url!, headers: req.headers as Record<string, string>, body: Buffer.concat(chunks) });
      const step = steps[Math.min(requests.length - 1, steps.length - 1)]!;
      if (step === 'drop') {
        req.socket.destroy();
        return;
      }
      const body = step.body === undefined ? '' : typeof step.body === 'string' ? step.body : JSON.stringify(step.body);
      res.writeHead(step.status, { 'content-type': typeof step.body === 'string' ? 'text/html' : 'application/json', ...step.headers });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** The error envelope, as the service answers it. */
export const envelope = (type: string, message = 'x') => ({ error: { type, message } });
