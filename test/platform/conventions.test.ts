import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { ClientRateLimiter } from '../../src/platform/http/client-rate-limit.ts';
import { MemoryRateLimitStore } from '../../src/platform/http/rate-limit-store.ts';
import { roomInRateLimitWindow, startService, usingPostgres, type TestService } from '../helpers.ts';
import { probeRoutes } from './probe-routes.ts';

describe('API conventions', () => {
  let svc: TestService;
  let key: string;
  before(async () => {
    svc = await startService({
      worker: false,
      env: { BODY_LIMIT_BYTES: 4096 },
      extraRoutes: async (app) => app.register(probeRoutes(() => svc.runtime.database.db)),
    });
    key = (await svc.workspace()).key;
  });
  after(() => svc.stop());

  describe('errors', () => {
    it('answers 422 ValidationException with every field and its messages', async () => {
      const res = await svc.request('POST', '/v1/probe/writes', { key, body: { name: '', count: 9, status: 'archived' } });
      assert.equal(res.status, 422);
      assert.equal(res.body.error.type, 'ValidationException');
      assert.equal(typeof res.body.error.message, 'string');
      const { details } = res.body.error;
      assert.deepEqual(Object.keys(details).sort(), ['count', 'name', 'status']);
      assert.match(details.count[0], /<= 5/);
      assert.match(details.status[0], /"draft", "publish"/);
      const missing = await svc.request('POST', '/v1/probe/writes', { key, body: {} });
      assert.deepEqual(missing.body.error.details, { name: ['The name field is required.'] });
    });

    it('answers 422 for a bad query parameter', async () => {
      const res = await svc.request('GET', '/v1/probe/keys', { key, query: { limit: 500 } });
      assert.equal(res.status, 422);
      assert.ok(res.body.error.details.limit);
    });

    it('answers malformed JSON, a wrong content type and an oversize body in the envelope', async () => {
      const malformed = await svc.request('POST', '/v1/probe/writes', { key, body: '{"name": ', headers: { 'content-type': 'application/json' } });
      assert.equal(malformed.status, 400);
      assert.equal(malformed.body.error.type, 'BadRequestException');
      const wrongType = await svc.request('POST', '/v1/probe/writes', { key, body: 'name=x', headers: { 'content-type': 'text/csv' } });
      assert.equal(wrongType.status, 415);
      assert.equal(wrongType.body.error.type, 'UnsupportedMediaTypeException');
      const big = await svc.request('POST', '/v1/probe/writes', { key, body: { name: 'x', pad: 'y'.repeat(10_000) } });
      assert.equal(big.status, 413);
      assert.equal(big.body.error.type, 'PayloadTooLargeException');
    });

    it('answers unknown routes with 404 and wrong methods with 405 and Allow', async () => {
      const unknown = await svc.request('GET', '/v1/nothing-here', { key });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error.type, 'RouteNotFoundException');
      const wrongMethod = await svc.request('DELETE', '/v1/me', { key });
      assert.equal(wrongMethod.status, 405);
      assert.equal(wrongMethod.body.error.type, 'MethodNotAllowedException');
      assert.match(wrongMethod.headers.get('allow') ?? '', /GET/);
    });

    it('sets security headers, a request id and CORS headers', async () => {
      const res = await svc.request('GET', '/v1/me', { key, headers: { origin: 'https://app.example.com', 'x-request-id': 'trace-123' } });
      assert.equal(res.headers.get('x-request-id'), 'trace-123');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.ok(res.headers.get('strict-transport-security'));
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
    });
  });

  describe('idempotency', () => {
    it('replays the first 2xx response with X-Idempotent-Replay and does not execute twice', async () => {
      const headers = { 'idempotency-key': `k-${Date.now()}` };
      const first = await svc.request('POST', '/v1/probe/writes', { key, body: { name: 'one' }, headers });
      assert.equal(first.status, 201);
      assert.equal(first.headers.get('x-idempotent-replay'), null);
      const second = await svc.request('POST', '/v1/probe/writes', { key, body: { name: 'one' }, headers });
      assert.equal(second.status, 201);
      assert.equal(second.headers.get('x-idempotent-replay'), 'true');
      assert.deepEqual(second.body, first.body);
      assert.equal(second.headers.get('location'), first.headers.get('location'));
    });

    it('refuses the same key with a different body', async () => {
      const headers = { 'idempotency-key': `reuse-${Date.now()}` };
      assert.equal((await svc.request('POST', '/v1/probe/writes', { key, body: { name: 'a' }, headers })).status, 201);
      const reused = await svc.request('POST', '/v1/probe/writes', { key, body: { name: 'b' }, headers });
      assert.equal(reused.status, 422);
      assert.equal(reused.body.error.type, 'IdempotencyKeyReusedException');
    });

    it('keys are per workspace', async () => {
      const other = await svc.workspace();
      const headers = { 'idempotency-key': `shared-${Date.now()}` };
      const mine = await svc.request('POST', '/v1/probe/writes', { key, body: { name: 'a' }, headers });
      const theirs = await svc.request('POST', '/v1/probe/writes', { key: other.key, body: { name: 'a' }, headers });
      assert.equal(theirs.headers.get('x-idempotent-replay'), null);
      assert.notEqual(theirs.body.data.execution, mine.body.data.execution);
    });

    it('lets only one of two concurrent requests with one key execute', async () => {
      const headers = { 'idempotency-key': `race-${Date.now()}` };
      const body = { name: 'race', delay_ms: 400 };
      const [a, b] = await Promise.all([
        svc.request('POST', '/v1/probe/writes', { key, body, headers }),
        svc.request('POST', '/v1/probe/writes', { key, body, headers }),
      ]);
      const statuses = [a.status, b.status].sort();
      assert.deepEqual(statuses, [201, 409]);
      const conflict = a.status === 409 ? a : b;
      assert.equal(conflict.body.error.type, 'IdempotencyInProgressException');
      assert.ok(conflict.headers.get('retry-after'));
      const replay = await svc.request('POST', '/v1/probe/writes', { key, body, headers });
      assert.equal(replay.headers.get('x-idempotent-replay'), 'true');
      assert.equal(replay.body.data.execution, (a.status === 201 ? a : b).body.data.execution);
    });

    it('does not store failed responses, so the key can be retried', async () => {
      const headers = { 'idempotency-key': `fail-${Date.now()}` };
      const failed = await svc.request('POST', '/v1/probe/writes', { key, body: { name: 'f', fail: true }, headers });
      assert.equal(failed.status, 409);
      const again = await svc.request('POST', '/v1/probe/writes', { key, body: { name: 'f', fail: true }, headers });
      assert.equal(again.status, 409);
      assert.equal(again.headers.get('x-idempotent-replay'), null);
      const invalidKey = await svc.request('POST', '/v1/probe/writes', { key, body: { name: 'f' }, headers: { 'idempotency-key': 'x'.repeat(300) } });
      assert.equal(invalidKey.status, 422);
    });
  });

  describe('cursor pagination', () => {
    it('neither skips nor repeats rows when rows are inserted between pages', async () => {
      const ws = await svc.workspace();
      const initial = [ws.keyId];
      for (let i = 0; i < 6; i++) initial.push((await svc.key(ws.id, ['books:read'])).id);
      const seen: number[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const res = await svc.request('GET', '/v1/probe/keys', { key: ws.key, query: cursor ? { limit: 2, cursor } : { limit: 2 } });
        assert.equal(res.status, 200);
        seen.push(...res.body.data.map((k: { id: number }) => k.id));
        cursor = res.body.meta.has_more ? res.body.meta.next_cursor : undefined;
        if (!res.body.meta.has_more) assert.equal(res.body.meta.next_cursor, null);
        // New rows sort first (newest first), so they must not shift later pages.
        await svc.key(ws.id, ['books:read']);
        pages++;
      } while (cursor);
      assert.equal(pages, 4);
      assert.deepEqual(seen, [...initial].reverse());
      assert.equal(new Set(seen).size, seen.length);
    });

    it('refuses a malformed cursor with 422', async () => {
      const res = await svc.request('GET', '/v1/probe/keys', { key, query: { cursor: 'garbage' } });
      assert.equal(res.status, 422);
      assert.ok(res.body.error.details.cursor);
    });
  });
});

describe('rate limits', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService({
      worker: false,
      env: { RATE_LIMIT_WORKSPACE_PER_MINUTE: 5, RATE_LIMIT_ENDPOINT_PER_MINUTE: 3, RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: 2 },
    });
  });
  after(() => svc.stop());

  it('limits each endpoint per workspace and answers 429 with Retry-After', async () => {
    await roomInRateLimitWindow();
    const ws = await svc.workspace();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await svc.request('GET', '/v1/me', { key: ws.key });
      statuses.push(res.status);
      assert.ok(res.headers.get('ratelimit-limit'));
      assert.ok(res.headers.get('ratelimit-reset'));
      if (i === 0) assert.equal(res.headers.get('ratelimit-remaining'), '2');
      if (res.status === 429) {
        assert.equal(res.body.error.type, 'RateLimitException');
        const retryAfter = Number(res.headers.get('retry-after'));
        assert.ok(retryAfter >= 1 && retryAfter <= 60);
      }
    }
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    // Another workspace has its own counters.
    const other = await svc.workspace();
    assert.equal((await svc.request('GET', '/v1/me', { key: other.key })).status, 200);
  });

  it('limits all requests of a workspace', async () => {
    const ws = await svc.workspace();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await svc.request('GET', '/v1/me', { key: ws.key })).status);
    for (let i = 0; i < 3; i++) statuses.push((await svc.request('GET', '/v1/nothing', { key: ws.key })).status);
    assert.equal(statuses.filter((s) => s === 429).length >= 1, true);
  });

  it('limits unauthenticated requests per IP, but never health checks', async () => {
    await roomInRateLimitWindow();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await svc.request('GET', '/v1/me', { key: 'wsk_live_wrong' })).status);
    assert.deepEqual(statuses, [401, 401, 429]);
    for (let i = 0; i < 5; i++) assert.equal((await svc.request('GET', '/v1/health')).status, 200);
  });

  it('keeps the connection open after a 401 or 429 to a request without a body', async () => {
    // A keep-alive client (without one, Node's client itself asks for Connection: close).
    const agent = new http.Agent({ keepAlive: true });
    after(() => agent.destroy());
    const headersOf = (key: string) => new Promise<{ status: number | undefined; connection: string | undefined }>((resolve, reject) => {
      http.get(`${svc.url}/v1/me`, { headers: { authorization: `Bearer ${key}` }, agent }, (res) => {
        res.resume();
        resolve({ status: res.statusCode, connection: res.headers.connection });
      }).on('error', reject);
    });
    const refused = await headersOf('wsk_live_wrong');
    assert.ok(refused.status === 401 || refused.status === 429);
    assert.notEqual(refused.connection, 'close');
    const ws = await svc.workspace();
    await roomInRateLimitWindow();
    for (let i = 0; i < 3; i++) await svc.request('GET', '/v1/me', { key: ws.key });
    const limited = await headersOf(ws.key);
    assert.equal(limited.status, 429);
    assert.notEqual(limited.connection, 'close');
  });
});

/**
 * Unauthenticated calls are counted per client, under the salted hash the
 * public endpoints use: no counter key may hold the caller's address. Run on
 * the store of the database under test (memory on PGlite, the table on
 * PostgreSQL) and, when REDIS_URL is set, on Redis.
 */
describe('rate-limit keys hold no client address', () => {
  const secret = 'ab'.repeat(32);
  const addresses = ['127.0.0.1', '::1', '::ffff:127.0.0.1'];
  const stores: { name: string; env: Record<string, string>; keys: (svc: TestService, prefix: string) => Promise<string[]> }[] = [
    {
      name: usingPostgres ? 'PostgreSQL table' : 'in-memory store',
      env: {},
      keys: async (svc) => usingPostgres
        ? ((await svc.runtime.database.runner.executeSql('select key from rate_limit_counters')).rows as { key: string }[]).map((r) => r.key)
        : (svc.runtime.rateLimitStore as MemoryRateLimitStore).keys(),
    },
  ];
  if (process.env.REDIS_URL) {
    stores.push({
      name: 'Redis',
      env: { REDIS_URL: process.env.REDIS_URL },
      keys: async (_svc, prefix) => {
        const redis = new Redis(process.env.REDIS_URL!);
        try {
          return await redis.keys(`${prefix}*`);
        } finally {
          await redis.quit();
        }
      },
    });
  }
  for (const store of stores) {
    it(`counts unauthenticated callers under the salted client hash (${store.name})`, async () => {
      const prefix = `flipbook-test-${process.pid}-${Date.now()}:`;
      const svc = await startService({
        worker: false,
        env: { SECRET_KEY: secret, REDIS_KEY_PREFIX: prefix, RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: 2, ...store.env },
      });
      try {
        const statuses: number[] = [];
        await roomInRateLimitWindow();
        for (let i = 0; i < 3; i++) statuses.push((await svc.request('GET', '/v1/me', { key: 'wsk_live_wrong' })).status);
        assert.deepEqual(statuses, [401, 401, 429]);
        const keys = await store.keys(svc, prefix);
        assert.ok(keys.length > 0, 'the attempts were counted');
        for (const key of keys) {
          for (const address of addresses) assert.ok(!key.includes(address), `a counter key holds the address: ${key}`);
        }
        // The counter is the one ClientRateLimiter would name for this caller (same secret, same address).
        const hashed = addresses.map((a) => new ClientRateLimiter(new MemoryRateLimitStore(), secret).clientKey(a));
        assert.ok(keys.some((key) => hashed.some((h) => key.includes(`client:${h}`))), `no salted client key among ${keys.join(', ')}`);
      } finally {
        await svc.stop();
      }
    });
  }
});
