/**
 * The service at rest (issue 15, defects 9 and 10): page image downloads that
 * arrive whole leave no "stream closed prematurely" line in the log (clients
 * often close the connection as soon as they have Content-Length bytes), and
 * idle renderer processes end, giving their memory back.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { makePdf } from '../documents.ts';
import { backgroundRenderWorkerPool, renderWorkerPool } from '../../src/modules/conversion/render-worker-pool.ts';
import { eventually, startService, uploadFile, waitForBatch, type TestService } from '../helpers.ts';

/** GETs a URL over a raw socket and closes it the moment the whole body (Content-Length) has arrived. */
function fetchAndHangUp(url: string): Promise<{ status: number; bodyBytes: number; contentLength: number }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(target.port), target.hostname, () => {
      socket.write(`GET ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nConnection: keep-alive\r\n\r\n`);
    });
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const headerEnd = received.indexOf('\r\n\r\n');
      if (headerEnd < 0) return;
      const head = received.subarray(0, headerEnd).toString('latin1');
      const contentLength = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? -1);
      const bodyBytes = received.length - headerEnd - 4;
      if (bodyBytes >= contentLength) {
        socket.destroy();
        resolve({ status: Number(head.split(' ')[1]), bodyBytes, contentLength });
      }
    });
    socket.on('error', reject);
  });
}

describe('asset downloads and the log', () => {
  let svc: TestService;
  let key: string;
  const lines: string[] = [];
  before(async () => {
    const sink = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
    svc = await startService({ logger: pino({ level: 'info' }, sink) });
    key = (await svc.workspace()).key;
  });
  after(() => svc.stop());

  it('logs no premature close for page images downloaded whole', async () => {
    const res = await uploadFile(svc, key, await makePdf({ pages: 2 }), 'logs.pdf');
    const batch = await waitForBatch(svc, key, res.body.data.batch_id);
    const pages = (await svc.request('GET', `/v1/books/${batch.books[0].random_id}/pages`, { key })).body.data;
    const urls: string[] = pages.flatMap((p: { images: { url: string }[] }) => p.images.map((i) => i.url));
    for (let round = 0; round < 5; round++) {
      for (const url of urls) {
        const got = await fetchAndHangUp(url);
        assert.equal(got.status, 200);
        assert.equal(got.bodyBytes, got.contentLength);
      }
    }
    // Every request has been answered and logged by now: its 'request completed' line is there.
    const completed = () => lines.filter((l) => l.includes('/assets/') || l.includes('request completed')).length;
    assert.ok(completed() > 0);
    const noisy = lines.filter((l) => /closed prematurely|terminated with an error/.test(l));
    assert.deepEqual(noisy, []);
  });
});

describe('render workers when the service is idle', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService({ env: { RENDER_IDLE_TIMEOUT_MS: 300, PAGE_WIDTHS: '320' } });
  });
  after(() => svc.stop());

  it('ends idle renderer processes, so their memory goes back to the system', async () => {
    const { key } = await svc.workspace();
    const res = await uploadFile(svc, key, await makePdf({ pages: 6 }), 'idle.pdf');
    // The renderers that do the work, noted while they do it (they may end 300 ms after it).
    const seen = new Set<number>();
    // Both pools: the readable phase's and the background phase's (pages past the first four).
    const alive = () => [...renderWorkerPool.pids, ...backgroundRenderWorkerPool.pids];
    const sample = setInterval(() => alive().forEach((pid) => seen.add(pid)), 10);
    const batch = await waitForBatch(svc, key, res.body.data.batch_id).finally(() => clearInterval(sample));
    assert.equal(batch.status, 'completed');
    assert.ok(seen.size > 0, 'renderers did the work');
    // Gone once idle, and their processes ended.
    await eventually(async () => alive().length === 0);
    // A process told to end takes a moment to exit and be reaped: wait for that, not for a proxy of it.
    await eventually(async () => [...seen].every((pid) => !isAlive(pid)), { timeoutMs: 10_000 });
  });
});

describe('render workers for an upload on its way', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService({ env: { RENDER_IDLE_TIMEOUT_MS: 60_000, PAGE_WIDTHS: '320' } });
  });
  after(() => svc.stop());

  it('start while the document is still arriving, and convert it', async () => {
    const { key } = await svc.workspace();
    await eventually(async () => renderWorkerPool.pids.length === 0);
    const pdf = Buffer.from(await makePdf({ pages: 2 }));
    // A multipart body sent in two parts: the file's part begins, then the request waits before its bytes end.
    const boundary = 'flipbook-slow-upload';
    const head = Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="files[]"; filename="slow.pdf"\r\ncontent-type: application/pdf\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    let sendRest!: () => void;
    const rest = new Promise<void>((resolve) => (sendRest = resolve));
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new Uint8Array(Buffer.concat([head, pdf.subarray(0, 100)])));
        await rest;
        controller.enqueue(new Uint8Array(Buffer.concat([pdf.subarray(100), tail])));
        controller.close();
      },
    });
    const answer = fetch(`${svc.url}/v1/books`, {
      method: 'POST', body, duplex: 'half',
      headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    } as RequestInit);
    try {
      // Renderers are up before the upload has ended (no batch, no job yet).
      await eventually(async () => renderWorkerPool.pids.length > 0, { timeoutMs: 10_000 });
    } finally {
      sendRest();
    }
    const res = await answer;
    assert.equal(res.status, 202);
    const { data } = await res.json() as { data: { batch_id: string } };
    const batch = await waitForBatch(svc, key, data.batch_id);
    assert.equal(batch.status, 'completed');
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
