/**
 * The access gate and embed-domain enforcement over plain HTTP: the sign-in
 * form, refusals, magic links from the outbox (single use, expiry, list
 * changes), reader sessions, rate limits, the audit log, and frame checks.
 * The same flows in a real browser are in gate.browser.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { asc, eq } from 'drizzle-orm';
import { magicLinks } from '../../src/modules/access/access.tables.ts';
import { auditEvents } from '../../src/modules/analytics/analytics.tables.ts';
import { mailMessages } from '../../src/platform/mail/mail.tables.ts';
import { insertBook } from '../factories.ts';
import { roomInRateLimitWindow, startService, type TestService } from '../helpers.ts';

describe('access gate', () => {
  let svc: TestService;
  let ws: { id: number; key: string };

  before(async () => {
    svc = await startService({ worker: false });
    ws = await svc.workspace();
  });
  after(() => svc.stop());

  async function gatedBook(entries: string[], settings: Record<string, unknown> = {}) {
    const row = await insertBook(svc, ws.id, { status: 'publish' });
    for (const email of entries) {
      const res = await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: row.randomId, email } });
      assert.ok(res.status === 201, res.text);
    }
    if (Object.keys(settings).length > 0) {
      const res = await svc.request('PUT', `/v1/books/${row.randomId}`, { key: ws.key, body: { status: 'publish', ...settings } });
      assert.equal(res.status, 200, res.text);
    }
    return row;
  }

  const readerUrl = (randomId: string) => `${svc.url}/read/${randomId}`;

  function askForLink(randomId: string, email: string, headers: Record<string, string> = {}) {
    return fetch(`${readerUrl(randomId)}/access`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ email }).toString(),
      redirect: 'manual',
    });
  }

  async function linkFromOutbox(to: string): Promise<string> {
    const [message] = await svc.runtime.database.db.select().from(mailMessages).where(eq(mailMessages.to, to)).orderBy(asc(mailMessages.id));
    assert.ok(message, `a message to ${to}`);
    const rows = await svc.runtime.services.mailer.list({ to });
    const match = /(http:\/\/\S+\/access\/[A-Za-z0-9_-]{43})/.exec(rows[0]!.text);
    assert.ok(match, rows[0]!.text);
    assert.equal(rows[0]!.status, 'outbox');
    return match[1]!;
  }

  async function audit(bookId: number) {
    const rows = await svc.runtime.database.db.select().from(auditEvents).where(eq(auditEvents.bookId, bookId)).orderBy(asc(auditEvents.id));
    return rows.map((r) => `${r.eventType}:${r.viewerEmail}${r.reason ? `:${r.reason}` : ''}`);
  }

  it('shows the sign-in form (with magic_link_message) instead of the book, and refuses its other endpoints', async () => {
    const row = await gatedBook(['ann@example.com'], { magic_link_message: 'Partners only: enter your work address.' });
    const res = await fetch(readerUrl(row.randomId));
    assert.equal(res.status, 401);
    const html = await res.text();
    assert.match(html, /Partners only: enter your work address\./);
    assert.match(html, new RegExp(`<form method="post" action="/read/${row.randomId}/access">`));
    assert.doesNotMatch(html, /reader-data/, 'none of the book is sent');
    const csp = res.headers.get('content-security-policy')!;
    const nonce = /'nonce-([^']+)'/.exec(csp)![1]!;
    assert.ok(html.includes(`nonce="${nonce}"`), 'the form\'s styles carry the CSP nonce');
    assert.equal((await fetch(`${readerUrl(row.randomId)}/search?q=page`)).status, 401);
    assert.equal((await fetch(`${readerUrl(row.randomId)}/text`)).status, 401);
    assert.equal((await fetch(`${readerUrl(row.randomId)}/download`)).status, 401);
  });

  it('refuses an unlisted address with magic_link_error_message and audits it', async () => {
    const row = await gatedBook(['ann@example.com'], { magic_link_error_message: 'Sorry, this catalogue is for dealers.' });
    const res = await askForLink(row.randomId, 'mallory@elsewhere.com');
    assert.equal(res.status, 403);
    assert.match(await res.text(), /Sorry, this catalogue is for dealers\./);
    assert.deepEqual(await svc.runtime.services.mailer.list({ to: 'mallory@elsewhere.com' }), []);
    assert.deepEqual(await audit(row.id), ['access_rejected:mallory@elsewhere.com:not_listed']);
    const invalid = await askForLink(row.randomId, 'not an address');
    assert.equal(invalid.status, 422);
  });

  it('sends a listed address a single-use link that starts a reader session', async () => {
    const row = await gatedBook(['ann@example.com']);
    const sent = await askForLink(row.randomId, 'Ann@Example.com');
    assert.equal(sent.status, 200);
    assert.match(await sent.text(), /We sent a link to ann@example\.com/);
    const link = await linkFromOutbox('ann@example.com');
    assert.ok(link.startsWith(`${readerUrl(row.randomId)}/access/`));
    const [stored] = await svc.runtime.database.db.select().from(magicLinks).where(eq(magicLinks.bookId, row.id));
    assert.ok(!stored!.tokenHash.includes(link.slice(-43)), 'only a hash of the token is stored');

    const opened = await fetch(link, { redirect: 'manual' });
    assert.equal(opened.status, 303);
    assert.equal(opened.headers.get('location'), `/read/${row.randomId}`);
    const cookie = opened.headers.get('set-cookie')!;
    assert.match(cookie, new RegExp(`^fb_reader=[^;]+; Path=/read/${row.randomId}; Expires=[^;]+; HttpOnly; SameSite=Lax$`));
    const session = cookie.split(';')[0]!;

    const reading = await fetch(readerUrl(row.randomId), { headers: { cookie: session } });
    assert.equal(reading.status, 200);
    assert.match(await reading.text(), /id="reader-data"/);
    // The session belongs to this book only.
    const otherBook = await gatedBook(['ann@example.com']);
    assert.equal((await fetch(readerUrl(otherBook.randomId), { headers: { cookie: session } })).status, 401);
    // A forged or altered cookie is worthless.
    assert.equal((await fetch(readerUrl(row.randomId), { headers: { cookie: `${session.slice(0, -2)}xx` } })).status, 401);

    const reused = await fetch(link, { redirect: 'manual' });
    assert.equal(reused.status, 410);
    assert.match(await reused.text(), /already used/);
    assert.deepEqual(await audit(row.id), ['access_requested:ann@example.com', 'access_granted:ann@example.com', 'access_rejected:ann@example.com:link_used']);
  });

  it('admits an address at a listed domain or its subdomains, and no other', async () => {
    const row = await gatedBook(['partner.org']);
    assert.equal((await askForLink(row.randomId, 'bob@partner.org')).status, 200);
    assert.equal((await askForLink(row.randomId, 'carol@eu.partner.org')).status, 200);
    assert.equal((await askForLink(row.randomId, 'dave@notpartner.org')).status, 403);
    const opened = await fetch(await linkFromOutbox('carol@eu.partner.org'), { redirect: 'manual' });
    assert.equal(opened.status, 303);
  });

  it('does not open an expired link, and shuts out a reader whose entry is removed', async () => {
    const row = await gatedBook(['erin@example.com']);
    await askForLink(row.randomId, 'erin@example.com');
    const expiredLink = await linkFromOutbox('erin@example.com');
    await svc.runtime.database.db.update(magicLinks).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(magicLinks.bookId, row.id));
    const expired = await fetch(expiredLink, { redirect: 'manual' });
    assert.equal(expired.status, 410);
    assert.match(await expired.text(), /expired/);
    assert.deepEqual((await audit(row.id)).at(-1), 'access_rejected:erin@example.com:link_expired');

    await askForLink(row.randomId, 'erin@example.com');
    const [fresh] = await svc.runtime.services.mailer.list({ to: 'erin@example.com', limit: 1 });
    const link = /(http:\/\/\S+)/.exec(fresh!.text)![1]!;
    const session = (await fetch(link, { redirect: 'manual' })).headers.get('set-cookie')!.split(';')[0]!;
    assert.equal((await fetch(readerUrl(row.randomId), { headers: { cookie: session } })).status, 200);

    const list = await svc.request('GET', '/v1/subscribers', { key: ws.key, query: { filter: row.randomId } });
    await svc.request('DELETE', `/v1/subscribers/${list.body.data[0].id}`, { key: ws.key });
    // The list is gone, so the book is open to everyone again.
    assert.equal((await fetch(readerUrl(row.randomId))).status, 200);
    // With another entry still in force, erin's old session no longer opens it.
    await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: row.randomId, email: 'frank@example.com' } });
    assert.equal((await fetch(readerUrl(row.randomId), { headers: { cookie: session } })).status, 401);
  });

  it('rate-limits link requests per address', async () => {
    const row = await gatedBook(['gina@example.com']);
    // Five an hour per address: the seven requests must fall in one hour's window.
    await roomInRateLimitWindow(60 * 60_000);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await askForLink(row.randomId, 'gina@example.com')).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
    const limited = await askForLink(row.randomId, 'gina@example.com');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    assert.equal((await svc.runtime.services.mailer.list({ to: 'gina@example.com' })).length, 5);
  });

  it('answers unknown books and bad tokens with 404', async () => {
    assert.equal((await askForLink('AAAAAAAAAAAAAAAAAAAAAA', 'ann@example.com')).status, 404);
    const row = await gatedBook(['ann@example.com']);
    assert.equal((await fetch(`${readerUrl(row.randomId)}/access/nonsense`, { redirect: 'manual' })).status, 404);
    assert.equal((await fetch(`${readerUrl(row.randomId)}/access/${'A'.repeat(43)}`, { redirect: 'manual' })).status, 404);
    const open = await insertBook(svc, ws.id, { status: 'publish' });
    const redirected = await askForLink(open.randomId, 'ann@example.com');
    assert.equal(redirected.status, 303, 'a book without a list has nothing to sign in to');
  });
});

describe('embed domains in the reader', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let randomId: string;

  before(async () => {
    svc = await startService({ worker: false });
    ws = await svc.workspace();
    randomId = (await insertBook(svc, ws.id, { status: 'publish' })).randomId;
  });
  after(() => svc.stop());

  const open = (headers: Record<string, string>) => fetch(`${svc.url}/read/${randomId}`, { headers });

  it('may be framed anywhere while the list is empty', async () => {
    const res = await open({ 'sec-fetch-dest': 'iframe', referer: 'https://anyone.example/page' });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-security-policy')!, /frame-ancestors \*/);
  });

  it('names the listed hosts in frame-ancestors and refuses frames on other hosts', async () => {
    await svc.request('POST', `/v1/books/${randomId}/embed-domains`, { key: ws.key, body: { domain: 'https://shop.example.com/catalog' } });
    const listed = await open({ 'sec-fetch-dest': 'iframe', referer: 'https://shop.example.com/spring' });
    assert.equal(listed.status, 200);
    assert.match(listed.headers.get('content-security-policy')!, /frame-ancestors shop\.example\.com:\* \*\.shop\.example\.com:\*;/);
    assert.equal((await open({ 'sec-fetch-dest': 'iframe', referer: 'https://eu.shop.example.com/' })).status, 200, 'subdomains are included');
    const refused = await open({ 'sec-fetch-dest': 'iframe', referer: 'https://evil.example/' });
    assert.equal(refused.status, 403);
    assert.match(await refused.text(), /does not allow it to be shown on this website/);
    assert.equal((await open({ 'sec-fetch-dest': 'iframe', referer: 'https://shop.example.com.evil.example/' })).status, 403);
    // A direct visit stays allowed: the list governs embedding, not reading.
    assert.equal((await open({ 'sec-fetch-dest': 'document' })).status, 200);
  });
});
