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
});
