/**
 * Bad input answers a clear 4xx in the error envelope, never a 500: text
 * that cannot be stored (NUL, unpaired surrogates) anywhere in the request,
 * hostile depth, cursors and numbers, malformed multipart, framework-level
 * refusals, and oversized uploads refused without reading them.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { makePng } from '../documents.ts';
import { insertBook } from '../factories.ts';
import { sendMultipart, startService, uploadFile, waitForBatch, type ApiResponse, type TestService } from '../helpers.ts';

const UPLOAD_LIMIT = 1024 * 1024;

function assertEnvelope(res: ApiResponse, status: number, type: string) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body?.error?.type, type, res.text);
  assert.equal(typeof res.body.error.message, 'string');
}

async function raw(svc: TestService, method: string, route: string, init: { headers?: Record<string, string>; body?: string } = {}): Promise<ApiResponse> {
  const response = await fetch(`${svc.url}${route}`, { method, headers: init.headers, body: init.body });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep text
  }
  return { status: response.status, headers: response.headers, body, text };
}

describe('bad input answers 4xx in the envelope', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let bookId: string;
  const auth = () => ({ authorization: `Bearer ${ws.key}` });

  before(async () => {
    svc = await startService({ env: { UPLOAD_LIMIT_BYTES: UPLOAD_LIMIT, RATE_LIMIT_ENDPOINT_PER_MINUTE: 0, RATE_LIMIT_WORKSPACE_PER_MINUTE: 0 } });
    ws = await svc.workspace();
    bookId = (await insertBook(svc, ws.id)).randomId;
  });
  after(() => svc.stop());

  it('refuses NUL and unpaired surrogates in path, query, JSON values and keys with a 422 naming the field', async () => {
    const inPath = await raw(svc, 'GET', '/v1/books/ab%00cd', { headers: auth() });
    assertEnvelope(inPath, 422, 'ValidationException');
    assert.ok(inPath.body.error.details.book, inPath.text);
    const inQuery = await raw(svc, 'GET', '/v1/books?filter%5Bname%5D=a%00b', { headers: auth() });
    assertEnvelope(inQuery, 422, 'ValidationException');
    assert.match(inQuery.body.error.details['filter[name]'][0], /NUL/);
    const surrogateQuery = await raw(svc, 'GET', `/v1/books?filter%5Bname%5D=${encodeURIComponent('x')}%ED%A0%80`, { headers: auth() });
    assert.ok(surrogateQuery.status < 500, surrogateQuery.text);
    const json = { 'content-type': 'application/json', ...auth() };
    const surrogate = await raw(svc, 'PUT', `/v1/books/${bookId}`, { headers: json, body: '{"status":"draft","title":"bad \\ud800 text"}' });
    assertEnvelope(surrogate, 422, 'ValidationException');
    assert.match(surrogate.body.error.details.title[0], /surrogate/);
    const nested = await raw(svc, 'POST', '/v1/books/bulk-settings/summary', { headers: json, body: '{"book_ids":["ok","no\\u0000pe"]}' });
    assertEnvelope(nested, 422, 'ValidationException');
    assert.ok(nested.body.error.details['book_ids.1'], nested.text);
    const key = await raw(svc, 'PUT', `/v1/books/${bookId}`, { headers: json, body: '{"status":"draft","ti\\u0000tle":"x"}' });
    assertEnvelope(key, 422, 'ValidationException');
  });

  it('bounds JSON depth before parsing, with or without an Idempotency-Key', async () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    for (const headers of [{}, { 'idempotency-key': 'deep-1' }] as Record<string, string>[]) {
      const res = await raw(svc, 'POST', '/v1/books/bulk-settings/summary', { headers: { 'content-type': 'application/json', ...auth(), ...headers }, body: `{"book_ids":${deep}}` });
      assertEnvelope(res, 400, 'BadRequestException');
      assert.match(res.body.error.message, /nested more than 64 levels/);
    }
  });

  it('answers hostile cursors with 422 on cursor', async () => {
    const cursors = [
      { s: '-created_at', v: 'not a time', i: 1 },
      { s: '-created_at', v: '2024-01-01T00:00:00Z', i: 1e300 },
      { s: '-created_at', v: '99999-01-01T00:00:00Z', i: 1 },
      { s: 'name', v: 'a\u0000b', i: 1 },
      { s: 'name', v: 12, i: 1 },
      { s: '-created_at', v: '2024-01-01T00:00:00Z', i: -5 },
      null,
      [1, 2],
    ];
    for (const payload of cursors) {
      const sort = payload && !Array.isArray(payload) && payload.s === 'name' ? 'name' : '-created_at';
      const cursor = Buffer.from(JSON.stringify(payload)).toString('base64url');
      const res = await svc.request('GET', '/v1/books', { key: ws.key, query: { cursor, sort } });
      assertEnvelope(res, 422, 'ValidationException');
      assert.ok(res.body.error.details.cursor, JSON.stringify(payload));
    }
  });

  it('answers out-of-range numbers with 422 naming the field', async () => {
    const id = await svc.request('DELETE', '/v1/subscribers/1e309', { key: ws.key });
    assertEnvelope(id, 422, 'ValidationException');
    const page = await svc.request('GET', '/v1/subscribers', { key: ws.key, query: { 'pagination[page]': '1e308' } });
    assertEnvelope(page, 422, 'ValidationException');
    assert.ok(page.body.error.details['pagination[page]'], page.text);
    const body = await raw(svc, 'PUT', `/v1/books/${bookId}/lead-form`, { headers: { 'content-type': 'application/json', ...auth() }, body: '{"enabled":true,"show_after_page":1e309}' });
    assertEnvelope(body, 422, 'ValidationException');
  });

  it('answers a very long asset path or URL segment in the envelope', async () => {
    const asset = await raw(svc, 'GET', `/assets/books/${'a'.repeat(3000)}/r/p1-w320.webp`);
    assertEnvelope(asset, 404, 'ModelNotFoundException');
    const segment = await raw(svc, 'GET', `/v1/books/${'b'.repeat(3000)}`, { headers: auth() });
    assertEnvelope(segment, 414, 'URITooLongException');
    const header = await raw(svc, 'GET', '/v1/me', { headers: { ...auth(), 'x-padding': 'p'.repeat(20_000) } });
    assertEnvelope(header, 431, 'RequestHeaderFieldsTooLargeException');
    const badUrl = await raw(svc, 'GET', '/v1/books/%E0%A4%A', { headers: auth() });
    assertEnvelope(badUrl, 400, 'BadRequestException');
  });

  it('ignores a trailing slash, and answers 405 only for methods the path does not have', async () => {
    const me = await svc.request('GET', '/v1/me/', { key: ws.key });
    assert.equal(me.status, 200, me.text);
    const wrong = await svc.request('DELETE', '/v1/me/', { key: ws.key });
    assertEnvelope(wrong, 405, 'MethodNotAllowedException');
    assert.equal(wrong.headers.get('allow'), 'GET');
  });

  it('answers 415 quoting the type sent, text/plain included (the reader beacons keep their own parser)', async () => {
    for (const type of ['application/xml', 'text/plain']) {
      const res = await raw(svc, 'POST', '/v1/books/bulk-settings/summary', { headers: { 'content-type': type, ...auth() }, body: '{"book_ids":["x"]}' });
      assertEnvelope(res, 415, 'UnsupportedMediaTypeException');
      assert.ok(res.body.error.message.includes(`"${type}"`), res.body.error.message);
    }
    const upload = await raw(svc, 'POST', '/v1/books', { headers: { 'content-type': 'application/json', ...auth() }, body: '{}' });
    assertEnvelope(upload, 415, 'UnsupportedMediaTypeException');
    assert.match(upload.body.error.message, /"application\/json"/);
  });

  it('answers malformed multipart with 400 and two files with the documented 422', async () => {
    for (const [type, body] of [
      ['multipart/form-data; boundary=xyz', 'this is not multipart'],
      ['multipart/form-data; boundary=xyz', '--xyz\r\nContent-Disposition: form-data; name="files[]"; filename="a.pdf"\r\n\r\n%PDF-1.4 cut off'],
      ['multipart/form-data', '--xyz\r\n\r\n'],
    ] as const) {
      const res = await raw(svc, 'POST', '/v1/books', { headers: { 'content-type': type, ...auth() }, body });
      assert.ok([400, 422].includes(res.status), `${res.status} ${res.text}`);
      assert.ok(res.body.error.type, res.text);
    }
    const form = new FormData();
    const png = await makePng(8, 8);
    form.append('files[]', new Blob([new Uint8Array(png)]), 'a.png');
    form.append('files[]', new Blob([new Uint8Array(png)]), 'b.png');
    const two = await fetch(`${svc.url}/v1/books`, { method: 'POST', headers: auth(), body: form });
    const twoBody = (await two.json()) as { error: { type: string; details: Record<string, string[]> } };
    assert.equal(two.status, 422);
    assert.deepEqual(twoBody.error.details, { files: ['One file per request.'] });
    const nulField = await sendMultipart(svc, ws.key, 'POST', '/v1/books', { status: 'dra\u0000ft' }, { field: 'files[]', bytes: png, name: 'a.png' });
    assertEnvelope(nulField, 422, 'ValidationException');
    assert.ok(nulField.body.error.details.status, nulField.text);
  });

  it('refuses an upload whose Content-Length is over the limit before reading the body', async () => {
    const { port } = new URL(svc.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    // Headers only: the answer must come although not one byte of the announced gigabyte is sent.
    socket.write(`POST /v1/books HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ws.key}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: ${1024 ** 3}\r\n\r\n`);
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
    });
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.match(answer, /connection: close/i);
    assert.match(answer, /"PayloadTooLargeException"/);
  });

  it('stops reading a body without a length the moment the file passes the limit', async () => {
    const total = 64 * 1024 * 1024;
    let sent = 0;
    const chunk = new Uint8Array(64 * 1024).fill(65);
    const head = new TextEncoder().encode('--b\r\nContent-Disposition: form-data; name="files[]"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\n');
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(head);
      },
      pull(controller) {
        if (sent >= total) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const res = await fetch(`${svc.url}/v1/books`, {
      method: 'POST', headers: { ...auth(), 'content-type': 'multipart/form-data; boundary=b' }, body, duplex: 'half',
    } as RequestInit).catch((error: Error) => error);
    if (!(res instanceof Error)) {
      assert.equal(res.status, 413);
      assert.equal(((await res.json()) as { error: { type: string } }).error.type, 'PayloadTooLargeException');
    }
    assert.ok(sent < total / 2, `the server read ${sent} of ${total} bytes`);
  });

  it('strips bidi controls from an uploaded filename before it names the book', async () => {
    const res = await uploadFile(svc, ws.key, await makePng(8, 8), 'invoice\u202Egnp.exe\u2066x\u2069.png');
    assert.equal(res.status, 202, res.text);
    const batch = await waitForBatch(svc, ws.key, res.body.data.batch_id);
    assert.equal(batch.original_filename, 'invoicegnp.exex.png');
    assert.equal(batch.books[0].name, 'invoicegnp.exex');
  });
});
