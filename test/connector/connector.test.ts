/** The Shopify connector through HTTP: identification (key and HMAC), replay, redaction, data requests, shop/redact, workspace name. */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { and, count, eq } from 'drizzle-orm';
import { after, before, describe, test } from 'node:test';
import { magicLinks, subscribers } from '../../src/modules/access/access.tables.ts';
import { auditEvents, leads, viewEvents, viewers } from '../../src/modules/analytics/analytics.tables.ts';
import { connectorEvents } from '../../src/modules/connector/connector.tables.ts';
import { mailMessages } from '../../src/platform/mail/mail.tables.ts';
import { insertBook } from '../factories.ts';
import { eventually, startService, type TestService } from '../helpers.ts';

const SECRET = 'shpss_test_client_secret_0123456789';
let svc: TestService;

before(async () => {
  svc = await startService({ env: { SHOPIFY_CLIENT_SECRET: SECRET, RATE_LIMIT_ENDPOINT_PER_MINUTE: 0 } });
});
after(async () => svc?.stop());

const sign = (body: string, secret = SECRET) => createHmac('sha256', secret).update(body).digest('base64');

async function connectorWorkspace(shopDomain?: string) {
  const ws = await svc.workspace();
  await svc.runtime.services.connector.grant(ws.keyId, shopDomain);
  return ws;
}

async function call(key: string, path: string, payload: unknown, headers: Record<string, string> = {}, signature?: string | null) {
  const body = JSON.stringify(payload);
  const h: Record<string, string> = { ...headers };
  if (signature !== null) h['x-shopify-hmac-sha256'] = signature ?? sign(body);
  return svc.request('POST', `/v1/integrations/shopify/${path}`, { key, body, headers: h });
}

const webhook = (topic: string, email?: string, shop = 'acme.myshopify.com') => ({
  topic,
  shopDomain: shop,
  payload: { shop_id: 954889, shop_domain: shop, ...(email ? { customer: { id: 191167, email, phone: null } } : {}), ...(topic === 'customers/data_request' ? { data_request: { id: 9999 } } : {}) },
});

/** A reader of a workspace with a lead, an access-list entry, a viewer identity with a view and audit events, a sign-in link and a mail. */
async function seedReader(workspaceId: number, bookId: number, email: string, session: string) {
  const db = svc.runtime.database.db;
  const [viewer] = await db.insert(viewers).values({ workspaceId, email, name: 'Reader' }).returning();
  await db.insert(leads).values({ workspaceId, bookId, viewerId: viewer!.id, sessionId: session, name: 'Reader', email, fields: { phone: '+49 30 1234' } });
  await db.insert(subscribers).values({ workspaceId, bookId, type: 'email', value: email });
  await db.insert(viewEvents).values({ workspaceId, bookId, sessionId: session, viewerId: viewer!.id });
  await db.insert(auditEvents).values([
    { workspaceId, bookId, source: 'gate', sourceEventId: 1, viewerId: viewer!.id, viewerEmail: email, eventType: 'access_granted' },
    { workspaceId, bookId, source: 'gate', sourceEventId: 2, viewerEmail: email, eventType: 'access_requested' },
  ]);
  await db.insert(magicLinks).values({ workspaceId, bookId, email, tokenHash: `hash-${session}`, expiresAt: new Date(Date.now() + 60_000) });
  await db.insert(mailMessages).values({ workspaceId, to: email, subject: 'Your link', text: 'link', status: 'outbox' });
}

async function holdings(workspaceId: number, email: string) {
  const db = svc.runtime.database.db;
  const n = async (q: Promise<{ n: number }[]>) => (await q)[0]!.n;
  return {
    leads: await n(db.select({ n: count() }).from(leads).where(and(eq(leads.workspaceId, workspaceId), eq(leads.email, email)))),
    entries: await n(db.select({ n: count() }).from(subscribers).where(and(eq(subscribers.workspaceId, workspaceId), eq(subscribers.value, email)))),
    viewers: await n(db.select({ n: count() }).from(viewers).where(and(eq(viewers.workspaceId, workspaceId), eq(viewers.email, email)))),
    audit: await n(db.select({ n: count() }).from(auditEvents).where(and(eq(auditEvents.workspaceId, workspaceId), eq(auditEvents.viewerEmail, email)))),
    links: await n(db.select({ n: count() }).from(magicLinks).where(and(eq(magicLinks.workspaceId, workspaceId), eq(magicLinks.email, email)))),
    mails: await n(db.select({ n: count() }).from(mailMessages).where(and(eq(mailMessages.workspaceId, workspaceId), eq(mailMessages.to, email)))),
  };
}
const ALL_ONE = { leads: 1, entries: 1, viewers: 1, audit: 2, links: 1, mails: 1 };
const NONE = { leads: 0, entries: 0, viewers: 0, audit: 0, links: 0, mails: 0 };

describe('connector identification', () => {
  test('HMAC: valid, invalid, missing, other secret; the key must be the connector\'s', async () => {
    const ws = await connectorWorkspace();
    const payload = webhook('customers/data_request', 'nobody@example.com');
    assert.equal((await call(ws.key, 'webhooks', payload)).status, 202);
    const invalid = await call(ws.key, 'webhooks', payload, {}, sign('{"other":"body"}'));
    assert.equal(invalid.status, 401);
    assert.equal(invalid.body.error.type, 'AuthenticationException');
    assert.equal((await call(ws.key, 'webhooks', payload, {}, null)).status, 401);
    assert.equal((await call(ws.key, 'webhooks', payload, {}, sign(JSON.stringify(payload), 'another-secret'))).status, 401);
    assert.equal((await call(ws.key, 'webhooks', payload, {}, 'not base64 at all')).status, 401);
    // A signature over the same JSON, re-serialised differently, is not the raw body's.
    const spaced = JSON.stringify(payload, null, 2);
    assert.equal((await svc.request('POST', '/v1/integrations/shopify/webhooks', { key: ws.key, body: spaced, headers: { 'x-shopify-hmac-sha256': sign(JSON.stringify(payload)) } })).status, 401);
    assert.equal((await svc.request('POST', '/v1/integrations/shopify/webhooks', { key: ws.key, body: spaced, headers: { 'x-shopify-hmac-sha256': sign(spaced) } })).status, 202);

    // An ordinary key of the same workspace, properly signed: 403.
    const plain = await svc.key(ws.id, ['*']);
    const forbidden = await call(plain.key, 'webhooks', payload);
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.error.type, 'AuthorizationException');
    assert.equal((await call(plain.key, 'workspace-name', { workspace_name: 'X' })).status, 403);
    // No key: 401; missing scope: 403.
    assert.equal((await call('', 'webhooks', payload)).status, 401);
    const narrow = await svc.key(ws.id, ['catalogs:read']);
    await svc.runtime.services.connector.grant(narrow.id);
    assert.equal((await call(narrow.key, 'webhooks', payload)).status, 403);

    // A rotated connector key stays the connector's; the revoked one is refused.
    const rotated = await svc.runtime.services.workspaces.rotateKey(ws.keyId);
    assert.equal((await call(rotated.key, 'webhooks', webhook('customers/data_request', 'x@example.com'))).status, 202);
    assert.equal((await call(ws.key, 'webhooks', payload)).status, 401);
  });

  test('a key granted for one shop is refused for another; shopDomain must match the payload', async () => {
    const ws = await connectorWorkspace('acme.myshopify.com');
    assert.equal((await call(ws.key, 'webhooks', webhook('customers/data_request', 'a@example.com', 'other.myshopify.com'))).status, 403);
    const mismatch = webhook('customers/data_request', 'a@example.com');
    mismatch.payload.shop_domain = 'other.myshopify.com';
    const res = await call(ws.key, 'webhooks', mismatch);
    assert.equal(res.status, 422);
    assert.ok(res.body.error.details['payload.shop_domain']);
    const badTopic = await call(ws.key, 'webhooks', { ...webhook('customers/redact', 'a@example.com'), topic: 'orders/create' });
    assert.equal(badTopic.status, 422);
    const noEmail = await call(ws.key, 'webhooks', webhook('customers/redact'));
    assert.equal(noEmail.status, 422);
  });

  test('without SHOPIFY_CLIENT_SECRET the connector answers 403', async () => {
    const bare = await startService({ worker: false });
    try {
      const ws = await bare.workspace();
      await bare.runtime.services.connector.grant(ws.keyId);
      const body = JSON.stringify(webhook('customers/data_request', 'a@example.com'));
      const res = await bare.request('POST', '/v1/integrations/shopify/webhooks', { key: ws.key, body, headers: { 'x-shopify-hmac-sha256': sign(body) } });
      assert.equal(res.status, 403);
      assert.match(res.body.error.message, /SHOPIFY_CLIENT_SECRET/);
    } finally {
      await bare.stop();
    }
  });
});

describe('compliance webhooks', () => {
  test('customers/redact removes exactly that customer\'s data; replay does nothing again', async () => {
    const ws = await connectorWorkspace();
    const other = await svc.workspace();
    const bookA = await insertBook(svc, ws.id);
    const bookB = await insertBook(svc, ws.id);
    const otherBook = await insertBook(svc, other.id);
    await seedReader(ws.id, bookA.id, 'ann@example.com', 's1');
    await seedReader(ws.id, bookA.id, 'bob@example.com', 's2');
    // Ann is the only entry of book B: it must stay private.
    await svc.runtime.database.db.insert(subscribers).values({ workspaceId: ws.id, bookId: bookB.id, type: 'email', value: 'solo@example.com' });
    await seedReader(ws.id, bookB.id, 'solo@example.com', 's3').catch(() => undefined);
    await seedReader(other.id, otherBook.id, 'ann@example.com', 's4');

    const first = await call(ws.key, 'webhooks', webhook('customers/redact', 'Ann@Example.com'), { 'x-shopify-webhook-id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043' });
    assert.equal(first.status, 202, first.text);
    assert.deepEqual(first.body.data, {
      action: 'customer_data_redacted', status: 'completed', replayed: false,
      counts: { leads: 1, access_list_entries: 1, viewers: 1, audit_events: 2, magic_links: 1, mail_messages: 1 },
    });
    assert.deepEqual(await holdings(ws.id, 'ann@example.com'), NONE);
    assert.deepEqual(await holdings(ws.id, 'bob@example.com'), ALL_ONE);
    assert.deepEqual(await holdings(other.id, 'ann@example.com'), ALL_ONE);
    // Ann's visit stays counted, anonymously.
    const [visit] = await svc.runtime.database.db.select().from(viewEvents).where(and(eq(viewEvents.bookId, bookA.id), eq(viewEvents.sessionId, 's1')));
    assert.equal(visit!.viewerId, null);

    // The same delivery again: the first result, nothing done (Bob's data, re-seeded under Ann's address, would otherwise go).
    await seedReader(ws.id, bookA.id, 'ann@example.com', 's5');
    const replay = await call(ws.key, 'webhooks', webhook('customers/redact', 'Ann@Example.com'), { 'x-shopify-webhook-id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043' });
    assert.equal(replay.status, 202);
    assert.deepEqual(replay.body.data, { ...first.body.data, replayed: true });
    assert.deepEqual(await holdings(ws.id, 'ann@example.com'), ALL_ONE);

    // Without a webhook id, the same topic and payload are recognised by their hash.
    const noId1 = await call(ws.key, 'webhooks', webhook('customers/redact', 'bob@example.com'));
    const noId2 = await call(ws.key, 'webhooks', { ...webhook('customers/redact', 'bob@example.com') });
    assert.equal(noId1.body.data.replayed, false);
    assert.equal(noId2.body.data.replayed, true);
    assert.deepEqual(await holdings(ws.id, 'bob@example.com'), NONE);

    // The last entry of a book is replaced, not removed: the book stays behind its access list.
    await call(ws.key, 'webhooks', webhook('customers/redact', 'solo@example.com'));
    const bookBEntries = await svc.runtime.database.db.select().from(subscribers).where(eq(subscribers.bookId, bookB.id));
    assert.equal(bookBEntries.length, 1);
    assert.match(bookBEntries[0]!.value, /^redacted-\d+@redacted\.invalid$/);
  });

  test('customers/data_request assembles and records what is held, touching nothing', async () => {
    const ws = await connectorWorkspace();
    const book = await insertBook(svc, ws.id);
    await seedReader(ws.id, book.id, 'dana@example.com', 'd1');
    const res = await call(ws.key, 'webhooks', webhook('customers/data_request', 'dana@example.com'), { 'x-shopify-webhook-id': 'dr-1' });
    assert.equal(res.status, 202);
    assert.deepEqual(res.body.data, {
      action: 'customer_data_recorded', status: 'recorded', replayed: false,
      counts: { leads: 1, access_list_entries: 1, viewers: 1, audit_events: 2, magic_links: 1, mail_messages: 1 },
    });
    assert.deepEqual(await holdings(ws.id, 'dana@example.com'), ALL_ONE);
    const [event] = await svc.runtime.services.connector.events(ws.id, 1);
    assert.equal(event!.topic, 'customers/data_request');
    const details = event!.details as any;
    assert.equal(details.data_request_id, 9999);
    assert.equal(details.data.email, 'dana@example.com');
    assert.equal(details.data.leads[0].book_id, book.randomId);
    assert.deepEqual(details.data.leads[0].fields, { phone: '+49 30 1234' });
    assert.equal(details.data.access_list_entries[0].email, 'dana@example.com');
    assert.equal(details.data.views.length, 1);
    assert.equal(details.data.audit_events.length, 2);
  });

  test('shop/redact schedules the deletion of the shop\'s catalogs; other catalogs and workspaces stay', async () => {
    const ws = await connectorWorkspace();
    const other = await svc.workspace();
    const mk = async (key: string, source: string) => (await svc.request('POST', '/v1/catalogs', { key, body: { name: source, source } })).body.data.catalog;
    const shopify = await mk(ws.key, 'shopify');
    const custom = await mk(ws.key, 'custom');
    const otherShopify = await mk(other.key, 'shopify');
    const up = await svc.request('POST', `/v1/catalogs/${shopify.id}/items:bulk-upsert`, { key: ws.key, body: { items: [['external_item_key=a'], ['external_item_key=b']] } });
    await eventually(async () => (await svc.request('GET', `/v1/catalogs/${shopify.id}/sync-jobs/${up.body.data.sync_job.id}`, { key: ws.key })).body.data.sync_job.status === 'completed');

    const res = await call(ws.key, 'webhooks', webhook('shop/redact'), { 'x-shopify-webhook-id': 'shop-1' });
    assert.equal(res.status, 202, res.text);
    assert.deepEqual(res.body.data, { action: 'shop_data_deletion_scheduled', status: 'scheduled', replayed: false, counts: { catalogs: 1, catalog_items: 2 } });
    await eventually(async () => (await svc.request('GET', `/v1/catalogs/${shopify.id}`, { key: ws.key })).status === 404);
    assert.equal((await svc.request('GET', `/v1/catalogs/${custom.id}`, { key: ws.key })).status, 200);
    assert.equal((await svc.request('GET', `/v1/catalogs/${otherShopify.id}`, { key: other.key })).status, 200);
    const [event] = await eventually(async () => {
      const rows = await svc.runtime.database.db.select().from(connectorEvents).where(eq(connectorEvents.deliveryId, 'shop-1'));
      return rows[0]?.status === 'completed' ? rows : null;
    });
    assert.deepEqual((event!.details as any).deleted, { catalogs: 1, catalog_items: 2 });
    const replay = await call(ws.key, 'webhooks', webhook('shop/redact'), { 'x-shopify-webhook-id': 'shop-1' });
    assert.equal(replay.body.data.replayed, true);
  });
});

describe('workspace name', () => {
  test('renames once; slug unique across workspaces (422); can_rename false after; audited', async () => {
    const taken = await svc.runtime.services.workspaces.createWorkspace({ name: 'Taken', slug: 'acme-outdoor-taken' });
    const ws = await connectorWorkspace();
    const collision = await call(ws.key, 'workspace-name', { workspace_name: 'Acme', workspace_slug: taken.slug });
    assert.equal(collision.status, 422, collision.text);
    assert.ok(collision.body.error.details.workspace_slug);
    const bad = await call(ws.key, 'workspace-name', { workspace_name: 'Acme', workspace_slug: 'Not A Slug' });
    assert.equal(bad.status, 422);

    const res = await call(ws.key, 'workspace-name', { workspace_name: 'Acme Outdoor', workspace_slug: 'acme-outdoor' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data.workspace, { can_rename: false, id: ws.id, name: 'Acme Outdoor', slug: 'acme-outdoor' });
    assert.ok(res.body.meta.previous_name);
    const again = await call(ws.key, 'workspace-name', { workspace_name: 'Acme 2' });
    assert.equal(again.status, 422);
    assert.ok(again.body.error.details.workspace_name);

    const me = await svc.request('GET', '/v1/me', { key: ws.key });
    assert.match(JSON.stringify(me.body), /Acme Outdoor/);
    const [event] = await svc.runtime.services.connector.events(ws.id, 1);
    assert.equal(event!.action, 'workspace_renamed');

    // Without a slug, one is made from the name.
    const ws2 = await connectorWorkspace();
    const derived = await call(ws2.key, 'workspace-name', { workspace_name: 'Café Zürich' });
    assert.equal(derived.status, 200, derived.text);
    assert.equal(derived.body.data.workspace.slug, 'cafe-zurich');
  });
});
