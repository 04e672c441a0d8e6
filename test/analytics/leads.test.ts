/** GET /v1/analytics/leads: leads submitted through the reader, as JSON, equal to the leads export for the same filter. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { insertBook } from '../factories.ts';
import { startService, type TestService } from '../helpers.ts';

const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
let ipCounter = 0;

interface Lead {
  id: number; book_id: string; submitted_at: string; name: string; email: string; phone: string | null; company: string | null; message: string | null;
  viewer_id: number | null; session_id: string; tracked_link_id: number | null; tracked_link_name: string | null;
}

/** The CSV line the export writes for a lead (RFC 4180 quoting; our values start with no formula character). */
const csvLine = (l: Lead) => [l.id, l.submitted_at, l.name, l.email, l.phone, l.company, l.message, l.viewer_id, l.session_id, l.tracked_link_id, l.tracked_link_name]
  .map((v) => (v === null ? '' : /[",\r\n]/.test(String(v)) ? `"${String(v).replaceAll('"', '""')}"` : String(v))).join(',');

describe('GET /v1/analytics/leads', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let book: { id: number; randomId: string };
  const sessions: string[] = [];

  async function post(route: string, body: unknown) {
    const response = await fetch(`${svc.url}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': BROWSER_UA, 'x-forwarded-for': `198.51.100.${++ipCounter}` },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    assert.equal(response.status, 200, text);
    return JSON.parse(text);
  }

  before(async () => {
    svc = await startService({ worker: false, env: { TRUST_PROXY: true } });
    // Leads are on every plan: a free workspace reads them.
    ws = await svc.workspace({ plan: 'free' });
    book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 4 });
    const form = await svc.request('PUT', `/v1/books/${book.randomId}/lead-form`, {
      key: ws.key,
      body: { enabled: true, title: 'Price list', fields: [{ name: 'name', required: true }, { name: 'email', required: true }, { name: 'company', required: false }, { name: 'message', required: false }], show_after_page: 1 },
    });
    assert.equal(form.status, 200, form.text);
    const people = [
      { name: 'Ann Lee', email: 'ann@example.com', company: 'Acme, Inc.' },
      { name: 'Bo Chen', email: 'bo@example.com', message: 'Call me "soon"' },
      { name: 'Cy Diaz', email: 'cy@example.com' },
    ];
    for (const person of people) {
      const session = randomUUID();
      sessions.push(session);
      await post(`/read/${book.randomId}/events`, { session_id: session, events: [{ seq: 0, type: 'session_started' }] });
      const res = await post(`/read/${book.randomId}/lead`, { session_id: session, seq: 1, page: 2, ...person });
      assert.equal(res.stored, true);
    }
  });
  after(() => svc.stop());

  async function all(query: Record<string, string>, limit: number) {
    const leads: Lead[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const params: URLSearchParams = new URLSearchParams({ book_id: book.randomId, limit: String(limit), ...query, ...(cursor ? { cursor } : {}) });
      const res = await svc.request('GET', `/v1/analytics/leads?${params}`, { key: ws.key });
      assert.equal(res.status, 200, res.text);
      leads.push(...res.body.data);
      cursor = res.body.meta.next_cursor;
      assert.equal(res.body.meta.has_more, cursor !== null);
      pages++;
    } while (cursor);
    return { leads, pages };
  }

  async function csv(query: Record<string, string>) {
    const params = new URLSearchParams({ bom: 'false', ...query });
    const res = await svc.request('GET', `/v1/exports/books/${book.randomId}/leads?${params}`, { key: ws.key });
    assert.equal(res.status, 200, res.text);
    return res.text.trim().split('\r\n').slice(1);
  }

  it('pages through the leads, oldest first, equal to the leads export', async () => {
    const { leads, pages } = await all({}, 2);
    assert.equal(pages, 2);
    assert.deepEqual(leads.map((l) => l.email), ['ann@example.com', 'bo@example.com', 'cy@example.com']);
    assert.deepEqual(leads.map((l) => l.session_id), sessions);
    assert.equal(leads[0]!.company, 'Acme, Inc.');
    assert.equal(leads[0]!.message, null);
    assert.equal(leads[1]!.message, 'Call me "soon"');
    assert.equal(leads[2]!.phone, null);
    assert.ok(leads.every((l) => l.book_id === book.randomId && typeof l.viewer_id === 'number'));
    assert.deepEqual(leads.map(csvLine), await csv({}));
  });

  it('applies the filters like the export', async () => {
    for (const query of [{ session_id: sessions[1]! }, { date: 'today', tz: 'UTC' }, { date: '2020-01-01', tz: 'UTC' }, { exclude_team: 'true' }, { version: '1' }, { version: '7' }] as Record<string, string>[]) {
      const { leads } = await all(query, 100);
      assert.deepEqual(leads.map(csvLine), await csv(query), JSON.stringify(query));
    }
    assert.deepEqual((await all({ session_id: sessions[1]! }, 100)).leads.map((l) => l.email), ['bo@example.com']);
    assert.deepEqual((await all({ date: '2020-01-01', tz: 'UTC' }, 100)).leads, []);
  });

  it("answers 404 for another workspace's book, 422 for a bad cursor, 403 without analytics:read", async () => {
    const other = await svc.workspace();
    const foreign = await svc.request('GET', `/v1/analytics/leads?book_id=${book.randomId}`, { key: other.key });
    const missing = await svc.request('GET', '/v1/analytics/leads?book_id=nope', { key: other.key });
    assert.equal(foreign.status, 404);
    assert.deepEqual(foreign.body, missing.body);
    assert.equal((await svc.request('GET', `/v1/analytics/leads?book_id=${book.randomId}&cursor=abc`, { key: ws.key })).status, 422);
    const narrow = await svc.key(ws.id, ['exports:read']);
    assert.equal((await svc.request('GET', `/v1/analytics/leads?book_id=${book.randomId}`, { key: narrow.key })).status, 403);
  });
});
