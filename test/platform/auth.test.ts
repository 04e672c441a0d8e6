import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startService, type TestService } from '../helpers.ts';
import { probeRoutes } from './probe-routes.ts';

describe('authentication, scopes and plans', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService({ extraRoutes: async (app) => app.register(probeRoutes(() => svc.runtime.database.db)) });
  });
  after(() => svc.stop());

  it('answers 401 without a key, with a malformed key and with an unknown key', async () => {
    for (const key of [null, 'nope', 'wsk_live_' + 'A'.repeat(43)]) {
      const res = await svc.request('GET', '/v1/me', { key });
      assert.equal(res.status, 401);
      assert.equal(res.body.error.type, 'AuthenticationException');
      assert.match(res.body.error.message, /key/i);
    }
  });

  it('accepts the key as a bearer token and as the api_key query parameter', async () => {
    const ws = await svc.workspace({ plan: 'pro', name: 'Acme' });
    const viaHeader = await svc.request('GET', '/v1/me', { key: ws.key });
    assert.equal(viaHeader.status, 200);
    assert.equal(viaHeader.body.data.workspace.id, ws.id);
    assert.equal(viaHeader.body.data.workspace.name, 'Acme');
    assert.equal(viaHeader.body.data.plan.name, 'pro');
    assert.equal(viaHeader.body.data.plan.features.remove_made_with_badge, true);
    assert.equal(viaHeader.body.data.plan.features.analytics, false);
    assert.deepEqual(viaHeader.body.data.auth.scopes, ['*']);
    assert.equal(viaHeader.body.data.auth.mode, 'live');
    assert.ok(!JSON.stringify(viaHeader.body).includes(ws.key), 'the key itself is never echoed');
    const viaQuery = await svc.request('GET', '/v1/me', { query: { api_key: ws.key } });
    assert.equal(viaQuery.status, 200);
    assert.equal(viaQuery.body.data.workspace.id, ws.id);
  });

  it('tells test keys from live keys', async () => {
    const ws = await svc.workspace();
    const test = await svc.key(ws.id, ['books:read'], 'test');
    assert.match(test.key, /^wsk_test_[0-9A-Za-z]{43}$/);
    const res = await svc.request('GET', '/v1/me', { key: test.key });
    assert.equal(res.body.data.auth.mode, 'test');
  });

  it('answers 401 for a revoked key and for the old key after rotation', async () => {
    const ws = await svc.workspace();
    assert.equal((await svc.request('GET', '/v1/me', { key: ws.key })).status, 200);
    await svc.runtime.services.workspaces.revokeKey(ws.keyId);
    const revoked = await svc.request('GET', '/v1/me', { key: ws.key });
    assert.equal(revoked.status, 401);
    assert.match(revoked.body.error.message, /revoked/);

    const other = await svc.key(ws.id, ['books:read']);
    const rotated = await svc.runtime.services.workspaces.rotateKey(other.id);
    assert.equal((await svc.request('GET', '/v1/me', { key: other.key })).status, 401);
    const fresh = await svc.request('GET', '/v1/me', { key: rotated.key });
    assert.equal(fresh.status, 200);
    assert.deepEqual(fresh.body.data.auth.scopes, ['books:read']);
  });

  it('answers 403 listing the granted scopes and the one needed', async () => {
    const ws = await svc.workspace({ scopes: ['books:read', 'brand:read'] });
    const res = await svc.request('POST', '/v1/probe/writes', { key: ws.key, body: { name: 'x' } });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.type, 'AuthorizationException');
    assert.deepEqual(res.body.error.details.required_scope, ['books:write']);
    assert.deepEqual(res.body.error.details.granted_scopes, ['books:read', 'brand:read']);
    const allowed = await svc.request('GET', '/v1/probe/keys', { key: ws.key });
    assert.equal(allowed.status, 200);
  });

  it('answers 403 PlanRestrictionException for a Company operation on another plan', async () => {
    const free = await svc.workspace({ plan: 'free' });
    const res = await svc.request('GET', '/v1/probe/company', { key: free.key });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.type, 'PlanRestrictionException');
    assert.deepEqual(res.body.error.details.required_plan, ['company']);
    assert.deepEqual(res.body.error.details.current_plan, ['free']);
    const company = await svc.workspace({ plan: 'company' });
    assert.equal((await svc.request('GET', '/v1/probe/company', { key: company.key })).status, 200);
  });

  it('confines every query to the key\'s workspace', async () => {
    const a = await svc.workspace();
    const b = await svc.workspace();
    await svc.key(b.id, ['books:read']);
    const listA = await svc.request('GET', '/v1/probe/keys', { key: a.key, query: { limit: 50 } });
    const listB = await svc.request('GET', '/v1/probe/keys', { key: b.key, query: { limit: 50 } });
    assert.deepEqual(listA.body.data.map((k: { id: number }) => k.id), [a.keyId]);
    assert.equal(listB.body.data.length, 2);
    assert.ok(!listB.body.data.some((k: { id: number }) => k.id === a.keyId));
    const meB = await svc.request('GET', '/v1/me', { key: b.key });
    assert.equal(meB.body.data.workspace.id, b.id);
  });

  it('serves health without a key and the OpenAPI document', async () => {
    const health = await svc.request('GET', '/v1/health');
    assert.equal(health.status, 200);
    assert.equal(health.body.status, 'ok');
    assert.equal(health.body.version, '1.0.0');
    assert.ok(!Number.isNaN(Date.parse(health.body.timestamp)));
    const doc = await svc.request('GET', '/v1/openapi.json');
    assert.equal(doc.status, 200);
    assert.equal(doc.body.openapi, '3.1.0');
    assert.ok(doc.body.paths['/v1/me'].get.responses['401']);
    assert.match(doc.body.paths['/v1/probe/company'].get.description, /Plan:\*\* company/);
    const docs = await fetch(`${svc.url}/v1/docs`, { redirect: 'follow' });
    assert.equal(docs.status, 200);
    assert.match(await docs.text(), /swagger/i);
  });
});

describe('health when the database is gone', () => {
  it('answers 503 with status unavailable', async () => {
    const svc = await startService({ worker: false });
    try {
      await svc.runtime.queue.stop(1000);
      await svc.runtime.database.close();
      const res = await svc.request('GET', '/v1/health');
      assert.equal(res.status, 503);
      assert.equal(res.body.status, 'unavailable');
    } finally {
      await svc.runtime.app?.close();
      await svc.stop().catch(() => undefined);
    }
  });
});
