/** Lead forms: configuration through the API, the form in the reader page, and submissions stored as leads. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { auditEvents, interactionEvents, leads, viewers, viewEvents } from '../../src/modules/analytics/analytics.tables.ts';
import { insertBook } from '../factories.ts';
import { startService, type TestService } from '../helpers.ts';

const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
let ipCounter = 0;

describe('lead forms', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let book: { id: number; randomId: string };

  before(async () => {
    svc = await startService({ worker: false, env: { TRUST_PROXY: true } });
    ws = await svc.workspace();
    book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 4 });
  });
  after(() => svc.stop());

  const db = () => svc.runtime.database.db;
  const formPath = (id = book.randomId) => `/v1/books/${id}/lead-form`;

  async function post(route: string, body: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${svc.url}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': BROWSER_UA, 'x-forwarded-for': `192.0.2.${++ipCounter}`, ...headers },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null, text };
  }

  it('answers the default form, disabled, for a book never configured', async () => {
    const res = await svc.request('GET', formPath(), { key: ws.key });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.book_id, book.randomId);
    assert.equal(res.body.data.enabled, false);
    assert.equal(res.body.data.updated_at, null);
    assert.ok(res.body.data.fields.some((f: { name: string; required: boolean }) => f.name === 'email' && f.required));
  });

  it('sets the form; email is always asked and required; left-out fields keep their values', async () => {
    const res = await svc.request('PUT', formPath(), {
      key: ws.key,
      body: { enabled: true, title: 'Get the price list', description: 'We send it today.', fields: [{ name: 'name', required: true }, { name: 'company', required: false }, { name: 'email', required: false }], show_after_page: 2 },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data.fields, [{ name: 'name', required: true }, { name: 'company', required: false }, { name: 'email', required: true }]);
    const partial = await svc.request('PUT', formPath(), { key: ws.key, body: { enabled: true, show_after_page: 3 } });
    assert.equal(partial.body.data.title, 'Get the price list');
    assert.equal(partial.body.data.show_after_page, 3);
    const noEmail = await svc.request('PUT', formPath(), { key: ws.key, body: { enabled: true, fields: [{ name: 'phone', required: true }] } });
    assert.deepEqual(noEmail.body.data.fields, [{ name: 'phone', required: true }, { name: 'email', required: true }]);
    const restore = await svc.request('PUT', formPath(), { key: ws.key, body: { enabled: true, fields: [{ name: 'name', required: true }, { name: 'company', required: false }, { name: 'email', required: true }] } });
    assert.equal(restore.status, 200);
  });

  it('validates the form and confines it to the workspace', async () => {
    for (const body of [
      {},
      { enabled: 'yes' },
      { enabled: true, fields: [] },
      { enabled: true, fields: [{ name: 'age', required: true }] },
      { enabled: true, fields: [{ name: 'name', required: true }, { name: 'name', required: false }] },
      { enabled: true, show_after_page: 0 },
      { enabled: true, title: '' },
      { enabled: true, title: '   ' },
      { enabled: true, colour: 'red' },
    ]) {
      const res = await svc.request('PUT', formPath(), { key: ws.key, body });
      assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
    }
    const other = await svc.workspace();
    assert.equal((await svc.request('GET', formPath(), { key: other.key })).status, 404);
    assert.equal((await svc.request('PUT', formPath(), { key: other.key, body: { enabled: false } })).status, 404);
    const readOnly = await svc.key(ws.id, ['books:read']);
    assert.equal((await svc.request('PUT', formPath(), { key: readOnly.key, body: { enabled: false } })).status, 403);
  });

  it('puts the enabled form in the reader page data', async () => {
    const html = await (await fetch(`${svc.url}/read/${book.randomId}`)).text();
    const data = JSON.parse(/<script type="application\/json" id="reader-data">(.*?)<\/script>/s.exec(html)![1]!);
    assert.deepEqual(data.lead, { title: 'Get the price list', text: 'We send it today.', fields: [['name', true], ['company', false], ['email', true]], after: 3 });
  });

  it('stores a submission as a lead, identifies the reader for the rest of the visit and records the event once', async () => {
    const session = randomUUID();
    const started = await post(`/read/${book.randomId}/events`, { session_id: session, events: [{ seq: 0, type: 'session_started' }] });
    assert.equal(started.status, 200, started.text);
    const submission = { session_id: session, seq: 1, name: ' Ann Lee ', email: 'Ann@Example.com', company: 'Acme', page: 3 };
    const res = await post(`/read/${book.randomId}/lead`, submission);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.stored, true);
    const again = await post(`/read/${book.randomId}/lead`, submission);
    assert.equal(again.body.stored, false);

    const stored = await db().select().from(leads).where(eq(leads.sessionId, session));
    assert.equal(stored.length, 1);
    assert.equal(stored[0]!.name, 'Ann Lee');
    assert.equal(stored[0]!.email, 'ann@example.com');
    assert.deepEqual(stored[0]!.fields, { company: 'Acme' });
    const [viewer] = await db().select().from(viewers).where(and(eq(viewers.workspaceId, ws.id), eq(viewers.email, 'ann@example.com')));
    assert.equal(viewer!.name, 'Ann Lee');
    const [view] = await db().select().from(viewEvents).where(eq(viewEvents.sessionId, session));
    assert.equal(view!.viewerId, viewer!.id);

    const later = await post(`/read/${book.randomId}/events`, { session_id: session, events: [{ seq: 2, type: 'link_clicked', page: 3 }] });
    assert.equal(later.body.stored, 1);
    const events = await db().select().from(interactionEvents).where(eq(interactionEvents.sessionId, session)).orderBy(interactionEvents.sequence);
    assert.deepEqual(events.map((e) => [e.eventType, e.viewerId]), [['session_started', null], ['lead_form_submitted', viewer!.id], ['link_clicked', viewer!.id]]);
    const audit = await db().select().from(auditEvents).where(eq(auditEvents.bookId, book.id));
    const leadAudit = audit.filter((a) => a.eventType === 'lead_form_submitted');
    assert.equal(leadAudit.length, 1);
    assert.equal(leadAudit[0]!.viewerEmail, 'ann@example.com');
    assert.equal(audit.find((a) => a.eventType === 'link_clicked')!.viewerEmail, 'ann@example.com');
  });

  it('refuses a submission that does not fit the form, or for a book without one', async () => {
    const session = randomUUID();
    for (const [body, field] of [
      [{ session_id: session, seq: 0, email: 'ann@example.com' }, 'name'],
      [{ session_id: session, seq: 0, name: 'Ann', email: 'not-an-address' }, 'email'],
      [{ session_id: session, seq: 0, name: 'Ann', email: 'ann@example.com', phone: '123' }, 'phone'],
      [{ session_id: session, seq: 0, name: 'Ann', email: 'ann@example.com', page: 9 }, 'page'],
      [{ session_id: session, seq: 0, name: 'Ann' }, 'email'],
    ] as const) {
      const res = await post(`/read/${book.randomId}/lead`, body);
      assert.equal(res.status, 422, `${field}: ${res.text}`);
      assert.ok(res.body.error.details[field], `${field}: ${res.text}`);
    }
    assert.equal((await db().select().from(leads).where(eq(leads.sessionId, session))).length, 0);
    const plain = await insertBook(svc, ws.id, { status: 'publish', pageCount: 2 });
    const none = await post(`/read/${plain.randomId}/lead`, { session_id: session, seq: 0, email: 'ann@example.com' });
    assert.equal(none.status, 404);
    const bot = await post(`/read/${book.randomId}/lead`, { session_id: session, seq: 0, name: 'Bot', email: 'bot@example.com' }, { 'user-agent': 'curl/8.0' });
    assert.equal(bot.body.stored, false);
    assert.equal(bot.body.counted, false);
  });
});
