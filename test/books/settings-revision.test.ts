/**
 * PUT /v1/books/{book} with `settings_revision`: the Book record carries it;
 * the revision read writes, a stale one answers 409 with the current one and
 * writes nothing. GET /read/{id}/preview: a signed-in person of the book's
 * workspace only; bad settings answer 422; another workspace's book is 404.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertBook } from '../factories.ts';
import { startService, type TestService } from '../helpers.ts';
import { member } from '../people/people-helpers.ts';

describe('settings_revision and the reader preview', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  before(async () => {
    svc = await startService({ worker: false });
    ws = await svc.workspace({ name: 'Revisions' });
  });
  after(async () => {
    await svc?.stop();
  });

  it('writes with the revision read and refuses a stale one without writing', async () => {
    const row = await insertBook(svc, ws.id, { name: 'Guarded' });
    const read = await svc.request('GET', `/v1/books/${row.randomId}`, { key: ws.key });
    const revision = read.body.data.settings_revision;
    assert.match(revision, /^[0-9a-f]{64}$/);

    const first = await svc.request('PUT', `/v1/books/${row.randomId}`, { key: ws.key, body: { status: 'draft', copyright_enabled: true, settings_revision: revision } });
    assert.equal(first.status, 200);
    assert.notEqual(first.body.data.settings_revision, revision, 'a settings change makes a new revision');

    const stale = await svc.request('PUT', `/v1/books/${row.randomId}`, { key: ws.key, body: { status: 'draft', copyright_enabled: false, settings_revision: revision } });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.error.type, 'ConflictException');
    assert.deepEqual(stale.body.error.details.current_settings_revision, [first.body.data.settings_revision]);
    const after = await svc.request('GET', `/v1/books/${row.randomId}`, { key: ws.key });
    assert.equal(after.body.data.settings.copyright_enabled, true, 'nothing written');

    // Without a revision, an update writes as before.
    assert.equal((await svc.request('PUT', `/v1/books/${row.randomId}`, { key: ws.key, body: { status: 'draft', copyright_enabled: false } })).status, 200);
  });

  it('previews only for the workspace\'s people, with settings checked as the update checks them', async () => {
    const row = await insertBook(svc, ws.id, { name: 'Previewed' });
    const editor = await member(svc, ws.id, 'editor@example.com', 'editor');
    const preview = (query: string, headers: Record<string, string> = { cookie: editor.cookie }) => fetch(`${svc.url}/read/${row.randomId}/preview${query}`, { headers });

    assert.equal((await preview('', {})).status, 401, 'signed out');
    const bad = await preview(`?settings=${encodeURIComponent(JSON.stringify({ animation_type: 'spin' }))}`);
    assert.equal(bad.status, 422);
    assert.deepEqual(Object.keys((await bad.json()).error.details), ['settings']);
    assert.equal((await preview('?settings=not-json')).status, 422);

    const other = await svc.workspace({ name: 'Elsewhere' });
    const theirs = await insertBook(svc, other.id, { name: 'Theirs' });
    const refused = await fetch(`${svc.url}/read/${theirs.randomId}/preview`, { headers: { cookie: editor.cookie } });
    assert.equal(refused.status, 404);
    assert.match(refused.headers.get('content-security-policy') ?? '', /frame-ancestors 'self'/);
  });

  it('previews a brand not yet saved, checked as POST /v1/brand checks it', async () => {
    const row = await insertBook(svc, ws.id, { name: 'Branded preview' });
    const editor = await member(svc, ws.id, 'brand-editor@example.com', 'editor');
    const preview = (brand: unknown, headers: Record<string, string> = { cookie: editor.cookie }) =>
      fetch(`${svc.url}/read/${row.randomId}/preview?brand=${encodeURIComponent(typeof brand === 'string' ? brand : JSON.stringify(brand))}`, { headers });

    assert.equal((await preview({ company_name: 'Acme' }, {})).status, 401, 'signed out');
    for (const bad of [{ company_name: '' }, { company_name: 'Acme', primary_color: 'blue' }, { company_name: 'Acme', website_url: 'acme' }, 'not-json',
      { company_name: 'Acme', logo: 'https://elsewhere.example/logo.png' }, { company_name: 'Acme', logo: `data:image/png;base64,${'A'.repeat(9000)}` }]) {
      const refused = await preview(bad);
      assert.equal(refused.status, 422, JSON.stringify(bad).slice(0, 80));
      assert.deepEqual(Object.keys((await refused.json()).error.details), ['brand']);
    }

    const pixel = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
    const shown = await preview({ company_name: 'Acme & Co', primary_color: '#123456', website_url: 'https://acme.example', google_analytics: 'G-ABCDEF1', twitter: 'https://x.com/acme', logo: pixel });
    assert.equal(shown.status, 200);
    assert.equal(shown.headers.get('cache-control'), 'no-store');
    assert.equal(shown.headers.get('x-robots-tag'), 'noindex');
    assert.match(shown.headers.get('content-security-policy') ?? '', /frame-ancestors 'self'/);
    assert.doesNotMatch(shown.headers.get('content-security-policy') ?? '', /googletagmanager/, 'a preview loads no analytics');
    const html = await shown.text();
    assert.match(html, /<body class="branded"/);
    assert.match(html, /--brand-bar:#123456/);
    assert.match(html, /<a class="brand-mark" href="https:\/\/acme\.example"[^>]*><img src="data:image\/png;base64,/);
    assert.match(html, /alt="Acme &amp; Co"/);
    assert.match(html, /data-network="twitter"/);
    assert.doesNotMatch(html, /gtag|Made with/);
    assert.match(html, /"preview":true/, 'its reader sends no reader events');

    // Without a brand, the preview is the reader as the workspace shows it (no take-over here).
    const plain = await (await fetch(`${svc.url}/read/${row.randomId}/preview`, { headers: { cookie: editor.cookie } })).text();
    assert.doesNotMatch(plain, /class="branded"/);
  });
});
