/**
 * @flipbook/client's conventions: authentication (a key, or a token handed
 * out per request), typed errors from the envelope, an Idempotency-Key on
 * every write that survives retries, and the retries themselves (network
 * errors, 429, 503, Retry-After, the limits). Against the real service, and,
 * for answers the service cannot be made to give on demand (a 503, a dropped
 * connection), against a scripted HTTP server on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createFlipbookClient, FlipbookApiError, isFlipbookApiError, toFormData, unwrap, type RetryInfo } from '@flipbook/client';
import { insertBook } from '../factories.ts';
import { startService, type TestService } from '../helpers.ts';
import { envelope, startScripted, type ScriptedServer } from './scripted-server.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A fetch that records every request it sends (method, path, idempotency key). */
function recordingFetch() {
  const sent: { method: string; path: string; key: string | null; authorization: string | null }[] = [];
  const fetchFn = (request: Request) => {
    sent.push({ method: request.method, path: new URL(request.url).pathname, key: request.headers.get('idempotency-key'), authorization: request.headers.get('authorization') });
    return fetch(request);
  };
  return { sent, fetch: fetchFn };
}

describe('client conventions against the service', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let bookId: string;

  before(async () => {
    svc = await startService({ worker: false, env: { RATE_LIMIT_ENDPOINT_PER_MINUTE: 0, RATE_LIMIT_WORKSPACE_PER_MINUTE: 0 } });
    ws = await svc.workspace();
    bookId = (await insertBook(svc, ws.id, { name: 'Conventions' })).randomId;
  });
  after(() => svc?.stop());

  it('authenticates with a key, or with a token function called before each request', async () => {
    const { data: me } = await unwrap(createFlipbookClient({ baseUrl: svc.url, token: ws.key }).GET('/v1/me'));
    assert.equal(me.workspace.id, ws.id);

    let calls = 0;
    const tokens = createFlipbookClient({ baseUrl: svc.url, token: async () => (calls++, ws.key) });
    await unwrap(tokens.GET('/v1/me'));
    await unwrap(tokens.GET('/v1/books'));
    assert.equal(calls, 2);

    const anonymous = createFlipbookClient({ baseUrl: svc.url });
    const health = await unwrap(anonymous.GET('/v1/health'));
    assert.equal(health.status, 'ok');
  });

  it('throws FlipbookApiError with the status, type, message, details and request id of the envelope', async () => {
    const wrong = createFlipbookClient({ baseUrl: svc.url, token: 'wsk_live_not_a_key', maxRetries: 0 });
    const unauthenticated = await unwrap(wrong.GET('/v1/me')).catch((e: unknown) => e);
    assert.ok(unauthenticated instanceof FlipbookApiError);
    assert.equal(unauthenticated.status, 401);
    assert.equal(unauthenticated.type, 'AuthenticationException');
    assert.match(unauthenticated.message, /API key/);
    assert.match(unauthenticated.requestId ?? '', /^[\w.-]+$/);
    assert.equal(unauthenticated.requestId, unauthenticated.response.headers.get('x-request-id'));

    const client = createFlipbookClient({ baseUrl: svc.url, token: ws.key });
    const missing = await unwrap(client.GET('/v1/books/{book}', { params: { path: { book: 'no-such-book' } } })).catch((e: unknown) => e);
    assert.ok(isFlipbookApiError(missing, 'ModelNotFoundException'));
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.details, {});

    const invalid = await unwrap(client.POST('/v1/books/{book}/tracked-links', { params: { path: { book: bookId } }, body: { name: '' } })).catch((e: unknown) => e);
    assert.ok(invalid instanceof FlipbookApiError && invalid.is('ValidationException'));
    assert.equal(invalid.status, 422);
    assert.ok(invalid.details.name?.length, JSON.stringify(invalid.details));

    const reader = createFlipbookClient({ baseUrl: svc.url, token: (await svc.key(ws.id, ['books:read'])).key });
    const forbidden = await unwrap(reader.POST('/v1/books/{book}/tracked-links', { params: { path: { book: bookId } }, body: { name: 'Newsletter' } })).catch((e: unknown) => e);
    assert.ok(isFlipbookApiError(forbidden, 'AuthorizationException'));
    assert.equal(forbidden.status, 403);
    assert.deepEqual(forbidden.details.required_scope, ['tracked-links:write']);
  });

  it('sends a new Idempotency-Key (UUID) with every write, none with reads, and keeps a key the caller gives', async () => {
    const recorder = recordingFetch();
    const client = createFlipbookClient({ baseUrl: svc.url, token: ws.key, fetch: recorder.fetch });
    await unwrap(client.POST('/v1/books/{book}/tracked-links', { params: { path: { book: bookId } }, body: { name: 'First' } }));
    await unwrap(client.POST('/v1/books/{book}/tracked-links', { params: { path: { book: bookId } }, body: { name: 'Second' } }));
    await unwrap(client.GET('/v1/books/{book}/tracked-links', { params: { path: { book: bookId } } }));
    const [first, second, read] = recorder.sent;
    assert.match(first!.key ?? '', UUID);
    assert.match(second!.key ?? '', UUID);
    assert.notEqual(first!.key, second!.key);
    assert.equal(read!.key, null);
    assert.equal(first!.authorization, `Bearer ${ws.key}`);

    // The caller's own key: the service replays the first answer for the same request, refuses it for another.
    const mine = `order-${bookId}`;
    const once = await unwrap(client.POST('/v1/books/{book}/tracked-links', { params: { path: { book: bookId } }, body: { name: 'Mine' }, headers: { 'Idempotency-Key': mine } }));
    const again = await client.POST('/v1/books/{book}/tracked-links', { params: { path: { book: bookId } }, body: { name: 'Mine' }, headers: { 'Idempotency-Key': mine } });
    assert.equal(recorder.sent.at(-1)!.key, mine);
    assert.equal(again.response.headers.get('x-idempotent-replay'), 'true');
    assert.equal(again.data?.data.id, once.data.id);
    const reused = await unwrap(client.POST('/v1/books/{book}/tracked-links', { params: { path: { book: bookId } }, body: { name: 'Other' }, headers: { 'Idempotency-Key': mine } })).catch((e: unknown) => e);
    assert.ok(isFlipbookApiError(reused, 'IdempotencyKeyReusedException'));

    const without = recordingFetch();
    const plain = createFlipbookClient({ baseUrl: svc.url, token: ws.key, fetch: without.fetch, idempotencyKeys: false });
    await unwrap(plain.POST('/v1/books/{book}/tracked-links', { params: { path: { book: bookId } }, body: { name: 'Keyless' } }));
    assert.equal(without.sent[0]!.key, null);
  });

  it('retries a write whose answer was lost with the same key: the service replays it, the work is done once', async () => {
    const sent: { key: string | null; replay: string | null }[] = [];
    let lose = true;
    const client = createFlipbookClient({
      baseUrl: svc.url, token: ws.key, retryDelayMs: 10,
      fetch: async (request) => {
        const response = await fetch(request);
        sent.push({ key: request.headers.get('idempotency-key'), replay: response.headers.get('x-idempotent-replay') });
        if (lose) {
          // The service did the work; the answer never reaches the caller.
          lose = false;
          await response.body?.cancel();
          throw new TypeError('fetch failed');
        }
        return response;
      },
    });
    const { data: created } = await unwrap(client.POST('/v1/books/{book}/tracked-links', { params: { path: { book: bookId } }, body: { name: 'Lost answer' } }));
    assert.equal(sent.length, 2);
    assert.equal(sent[0]!.key, sent[1]!.key);
    assert.equal(sent[1]!.replay, 'true');
    const { data: links } = await unwrap(client.GET('/v1/books/{book}/tracked-links', { params: { path: { book: bookId }, query: { limit: 200 } } }));
    assert.deepEqual(links.filter((l) => l.name === 'Lost answer').map((l) => l.id), [created.id]);
  });

  it('throws RateLimitException with the Retry-After when retries are off', async () => {
    const limited = await startService({ worker: false, env: { RATE_LIMIT_ENDPOINT_PER_MINUTE: 2 } });
    try {
      const limitedWs = await limited.workspace();
      const client = createFlipbookClient({ baseUrl: limited.url, token: limitedWs.key, maxRetries: 0 });
      let error: unknown;
      // Two calls fit the window; a window ending between two calls only delays the refusal.
      for (let i = 0; i < 6 && !error; i++) error = await unwrap(client.GET('/v1/me')).then(() => undefined, (e: unknown) => e);
      assert.ok(isFlipbookApiError(error, 'RateLimitException'), String(error));
      assert.equal(error.status, 429);
      assert.ok(error.retryAfter !== null && error.retryAfter >= 0 && error.retryAfter <= 60, String(error.retryAfter));
    } finally {
      await limited.stop();
    }
  });
});

describe('client retries against a scripted server', () => {
  let server: ScriptedServer | undefined;
  after(() => server?.close());
  const start = async (...steps: Parameters<typeof startScripted>[0]) => {
    await server?.close();
    server = await startScripted(steps);
    return server;
  };

  it('retries a read after 503 and 429, honouring Retry-After, and returns the answer that succeeded', async () => {
    const s = await start(
      { status: 503, body: envelope('ServiceUnavailableException') },
      { status: 429, headers: { 'retry-after': '1' }, body: envelope('RateLimitException') },
      { status: 200, body: { status: 'ok', timestamp: '2026-01-01T00:00:00.000Z', version: '1' } },
    );
    const retries: RetryInfo[] = [];
    const client = createFlipbookClient({ baseUrl: s.url, retryDelayMs: 10, onRetry: (info) => retries.push(info) });
    const health = await unwrap(client.GET('/v1/health'));
    assert.equal(health.status, 'ok');
    assert.equal(s.requests.length, 3);
    assert.deepEqual(retries.map((r) => [r.attempt, r.status]), [[1, 503], [2, 429]]);
    assert.ok(retries[0]!.delayMs >= 5 && retries[0]!.delayMs <= 10, 'backoff: half the base delay plus jitter');
    assert.equal(retries[1]!.delayMs, 1000, 'Retry-After: 1');
  });

  it('re-sends the same JSON body and Idempotency-Key on every attempt of a write', async () => {
    const s = await start(
      { status: 503, body: envelope('ServiceUnavailableException') },
      'drop',
      { status: 201, body: { data: { id: 7 } } },
    );
    const client = createFlipbookClient({ baseUrl: s.url, token: 'wsk_test_x', retryDelayMs: 10 });
    const result = await client.POST('/v1/books/{book}/tracked-links', { params: { path: { book: 'b' } }, body: { name: 'Spring mailing', slug: 'spring' } });
    assert.equal(result.response.status, 201);
    assert.equal(s.requests.length, 3);
    const keys = new Set(s.requests.map((r) => r.headers['idempotency-key']));
    assert.equal(keys.size, 1);
    assert.match([...keys][0]!, UUID);
    for (const r of s.requests) {
      assert.deepEqual(JSON.parse(r.body.toString()), { name: 'Spring mailing', slug: 'spring' });
      assert.equal(r.headers.authorization, 'Bearer wsk_test_x');
    }
  });

  it('re-sends a multipart body (a file) whole on a retry', async () => {
    const s = await start({ status: 503, body: envelope('ServiceUnavailableException') }, { status: 201, body: { data: {} } });
    const client = createFlipbookClient({ baseUrl: s.url, retryDelayMs: 10 });
    const logo = new Blob([new Uint8Array(50_000).fill(7)], { type: 'image/png' });
    const result = await client.POST('/v1/brand', { body: { company_name: 'Acme', file: logo as unknown as string }, bodySerializer: toFormData });
    assert.equal(result.response.status, 201);
    assert.equal(s.requests.length, 2);
    assert.match(s.requests[0]!.headers['content-type']!, /^multipart\/form-data; boundary=/);
    assert.ok(s.requests[0]!.body.length > 50_000);
    assert.deepEqual(s.requests[1]!.body, s.requests[0]!.body);
    assert.equal(s.requests[1]!.headers['idempotency-key'], s.requests[0]!.headers['idempotency-key']);
  });

  it('retries the 409 of a key still in progress, not other 409s', async () => {
    const s = await start(
      { status: 409, headers: { 'retry-after': '0' }, body: envelope('IdempotencyInProgressException') },
      { status: 409, body: envelope('ConflictException') },
    );
    const client = createFlipbookClient({ baseUrl: s.url, retryDelayMs: 10 });
    const error = await unwrap(client.DELETE('/v1/books/{book}', { params: { path: { book: 'b' } } })).catch((e: unknown) => e);
    assert.ok(isFlipbookApiError(error, 'ConflictException'));
    assert.equal(s.requests.length, 2);
  });

  it('gives up after maxRetries and throws the last answer', async () => {
    const s = await start({ status: 503, body: envelope('ServiceUnavailableException', 'Try a narrower range.') });
    const client = createFlipbookClient({ baseUrl: s.url, maxRetries: 1, retryDelayMs: 10 });
    const error = await unwrap(client.GET('/v1/health')).catch((e: unknown) => e);
    assert.ok(isFlipbookApiError(error, 'ServiceUnavailableException'));
    assert.equal(error.message, 'Try a narrower range.');
    assert.equal(s.requests.length, 2);
  });

  it('throws the network error after the last attempt', async () => {
    const s = await start('drop');
    const client = createFlipbookClient({ baseUrl: s.url, maxRetries: 2, retryDelayMs: 10 });
    await assert.rejects(client.GET('/v1/health'), TypeError);
    assert.equal(s.requests.length, 3);
  });

  it('does not retry a write without an Idempotency-Key, nor an answer asking to wait longer than maxRetryDelayMs', async () => {
    const s = await start({ status: 503, body: envelope('ServiceUnavailableException') });
    const keyless = createFlipbookClient({ baseUrl: s.url, idempotencyKeys: false, retryDelayMs: 10 });
    const result = await keyless.POST('/v1/books/{book}/tracked-links', { params: { path: { book: 'b' } }, body: { name: 'x' } });
    assert.equal(result.response.status, 503);
    assert.equal(s.requests.length, 1);

    const slow = await start({ status: 429, headers: { 'retry-after': '120' }, body: envelope('RateLimitException') });
    const client = createFlipbookClient({ baseUrl: slow.url, maxRetryDelayMs: 30_000 });
    const error = await unwrap(client.GET('/v1/health')).catch((e: unknown) => e);
    assert.ok(isFlipbookApiError(error, 'RateLimitException'));
    assert.equal(error.retryAfter, 120);
    assert.equal(slow.requests.length, 1);
  });

  it('reports an answer that is not the envelope as UnexpectedResponse', async () => {
    const s = await start({ status: 502, body: '<html>Bad gateway</html>' });
    const client = createFlipbookClient({ baseUrl: s.url });
    const error = await unwrap(client.GET('/v1/health')).catch((e: unknown) => e);
    assert.ok(isFlipbookApiError(error, 'UnexpectedResponse'));
    assert.equal(error.status, 502);
    assert.equal(s.requests.length, 1, '502 is not retried');
  });
});
