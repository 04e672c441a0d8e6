/**
 * People through the real API on a real database: sign-in, sessions, roles,
 * members, invitations and keys made in the application, with the issue's
 * security cases each a test (docs/people-and-teams.md).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { eventually, startService, type TestService } from '../helpers.ts';
import { createAdminCommands } from '../../src/admin-commands.ts';
import type { BootstrapInfo } from '../../src/runtime.ts';
import { asPerson, mailedLink, member, sessionCookieOf, signIn, tokenOf } from './people-helpers.ts';

const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}@example.com`;

describe('people: sign-in, sessions, roles, members, invitations, keys', () => {
  let svc: TestService;
  let ws: { id: number; key: string };

  before(async () => {
    svc = await startService({ worker: false, env: { SIGN_IN_PER_ADDRESS_PER_HOUR: 3, SIGN_IN_PER_CLIENT_PER_HOUR: 0 } });
    ws = await svc.workspace();
  });
  after(() => svc.stop());

  it('signs in with a mailed link, once: the same answer for a known and an unknown address, the account created on use', async () => {
    const known = unique('known');
    await signIn(svc, known);
    const unknown = unique('unknown');
    const a = await svc.request('POST', '/v1/auth/sign-in-links', { body: { email: known } });
    const b = await svc.request('POST', '/v1/auth/sign-in-links', { body: { email: unknown } });
    assert.equal(a.status, 202);
    assert.deepEqual([b.status, b.text], [a.status, a.text]);
    assert.equal(await svc.runtime.services.accounts.findUserByEmail(unknown), null, 'no account before the link is used');

    const token = tokenOf(await mailedLink(svc, unknown, 'sign-in/verify'));
    const first = await svc.request('POST', '/v1/auth/sign-in-links/verify', { body: { token } });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.data.user.email, unknown);
    assert.deepEqual(first.body.data.workspaces, []);
    const cookie = first.headers.getSetCookie().find((c) => c.startsWith('flipbook_session='))!;
    assert.match(cookie, /HttpOnly/i);
    assert.match(cookie, /SameSite=Lax/i);
    assert.doesNotMatch(cookie, /Secure/i, 'no Secure flag over plain http');

    const again = await svc.request('POST', '/v1/auth/sign-in-links/verify', { body: { token } });
    assert.equal(again.status, 410, 'a sign-in link works once');
    assert.equal(again.body.error.type, 'GoneException');
  });

  it('refuses a sign-in link after its expiry', async () => {
    const email = unique('late');
    await svc.request('POST', '/v1/auth/sign-in-links', { body: { email } });
    const token = tokenOf(await mailedLink(svc, email, 'sign-in/verify'));
    await svc.runtime.database.db.execute(sql`update sign_in_links set expires_at = now() - interval '1 second' where email = ${email}`);
    const late = await svc.request('POST', '/v1/auth/sign-in-links/verify', { body: { token } });
    assert.equal(late.status, 410);
    assert.match(late.body.error.message, /expired/);
  });

  it('rate-limits sign-in attempts per address', async () => {
    const email = unique('busy');
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await svc.request('POST', '/v1/auth/sign-in-links', { body: { email } })).status);
    assert.deepEqual(statuses, [202, 202, 202, 429]);
    const other = await svc.request('POST', '/v1/auth/sign-in-links', { body: { email: unique('calm') } });
    assert.equal(other.status, 202, 'another address is not affected');
  });

  it('refuses a cookie write without the CSRF token or from another site (CSRF)', async () => {
    const owner = await member(svc, ws.id, unique('csrf'), 'owner');
    const body = { name: 'csrf', scopes: ['books:read'] };
    const noToken = await owner.call('POST', '/v1/api-keys', body, { 'x-csrf-token': '' });
    assert.equal(noToken.status, 403);
    assert.equal(noToken.body.error.type, 'CsrfException');
    const wrongToken = await owner.call('POST', '/v1/api-keys', body, { 'x-csrf-token': 'x'.repeat(owner.csrf.length) });
    assert.equal(wrongToken.status, 403);
    const crossSite = await owner.call('POST', '/v1/api-keys', body, { origin: 'https://evil.example' });
    assert.equal(crossSite.status, 403);
    assert.equal(crossSite.body.error.type, 'CsrfException');
    const fetchMetadata = await owner.call('POST', '/v1/api-keys', body, { 'sec-fetch-site': 'cross-site' });
    assert.equal(fetchMetadata.status, 403);
    const reads = await owner.call('GET', '/v1/api-keys', undefined, { origin: 'https://evil.example' });
    assert.equal(reads.status, 200, 'reads need no token');
    const sameOrigin = await owner.call('POST', '/v1/api-keys', body, { origin: svc.url });
    assert.equal(sameOrigin.status, 201, JSON.stringify(sameOrigin.body));
    const keys = (await owner.call('GET', '/v1/api-keys')).body.data.filter((k: { name: string }) => k.name === 'csrf');
    assert.equal(keys.length, 1, 'only the request with the token made a key');
  });

  it('ends a session at sign-out, one session or all of them', async () => {
    const email = unique('leaver');
    const a = await signIn(svc, email);
    const b = await signIn(svc, email);
    const c = await signIn(svc, email);
    const out = await a.call('POST', '/v1/auth/sign-out');
    assert.equal(out.status, 204);
    assert.match(out.headers.getSetCookie().join(), /flipbook_session=;/);
    assert.equal((await a.call('GET', '/v1/account')).status, 401, 'the signed-out session no longer works');

    const sessions = (await b.call('GET', '/v1/account/sessions')).body.data;
    assert.equal(sessions.length, 2);
    const other = sessions.find((s: { current: boolean }) => !s.current);
    assert.equal((await b.call('DELETE', `/v1/account/sessions/${other.id}`)).status, 204);
    assert.equal((await c.call('GET', '/v1/account')).status, 401);
    assert.equal((await b.call('GET', '/v1/account')).status, 200);
    assert.equal((await b.call('DELETE', '/v1/account/sessions')).status, 204);
    assert.equal((await b.call('GET', '/v1/account')).status, 401, 'signed out everywhere, this session included');
  });

  it('acts with the role\'s scopes: a viewer cannot write, an editor cannot make keys', async () => {
    const viewer = await member(svc, ws.id, unique('viewer'), 'viewer');
    assert.equal((await viewer.call('GET', '/v1/books')).status, 200);
    const write = await viewer.call('POST', '/v1/books/konva', { name: 'x', pages: [] });
    assert.equal(write.status, 403);
    assert.equal(write.body.error.type, 'AuthorizationException');
    assert.match(write.body.error.message, /books:write/);
    const me = (await viewer.call('GET', '/v1/me')).body.data.auth;
    assert.equal(me.method, 'session');
    assert.equal(me.user.role, 'viewer');
    assert.ok(!me.scopes.includes('books:write'));

    const editor = await member(svc, ws.id, unique('editor'), 'editor');
    const key = await editor.call('POST', '/v1/api-keys', { name: 'nope', scopes: ['books:read'] });
    assert.equal(key.status, 403);
    assert.match(key.body.error.message, /admin/);
    assert.equal((await editor.call('GET', '/v1/api-keys')).status, 403);
    assert.equal((await editor.call('POST', '/v1/invitations', { email: unique('x'), role: 'viewer' })).status, 403);
  });

  it('answers a signed-out account read with 401 without counting it against the client', async () => {
    const answers = [];
    for (let i = 0; i < 12; i++) answers.push((await svc.request('GET', '/v1/account')).status);
    assert.deepEqual(new Set(answers), new Set([401]), 'never 429: nothing is being guessed');
  });

  it('keeps people operations to people: an API key gets 403', async () => {
    for (const [method, path] of [['GET', '/v1/api-keys'], ['GET', '/v1/members'], ['GET', '/v1/account'], ['POST', '/v1/invitations']] as const) {
      const res = await svc.request(method, path, { key: ws.key, body: method === 'POST' ? { email: unique('k'), role: 'viewer' } : undefined });
      assert.equal(res.status, 403, `${method} ${path}`);
    }
  });

  it('bounds keys and roles by the maker\'s role: an admin grants neither * nor owner', async () => {
    const admin = await member(svc, ws.id, unique('admin'), 'admin');
    const star = await admin.call('POST', '/v1/api-keys', { name: 'all', scopes: ['*'] });
    assert.equal(star.status, 422);
    assert.match(star.body.error.details.scopes[0], /cannot grant: \*/);
    const ownerInvite = await admin.call('POST', '/v1/invitations', { email: unique('o'), role: 'owner' });
    assert.equal(ownerInvite.status, 403);
    const ok = await admin.call('POST', '/v1/api-keys', { name: 'webhooks', scopes: ['webhooks:write', 'books:read'], mode: 'test' });
    assert.equal(ok.status, 201);
    assert.match(ok.body.data.key, /^wsk_test_/);
  });

  it('makes, uses, rotates with an overlap, and revokes a key; every step in the audit trail', async () => {
    const owner = await member(svc, ws.id, unique('keys'), 'owner');
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const made = await owner.call('POST', '/v1/api-keys', { name: 'deploy', scopes: ['books:read'], mode: 'live', expires_at: expires });
    assert.equal(made.status, 201);
    const { key, id } = made.body.data;
    assert.equal(made.body.data.created_by.email, owner.email);
    assert.equal(made.body.data.expires_at, expires);
    assert.equal((await svc.request('GET', '/v1/me', { key })).status, 200);
    // The last use is written after the request, without delaying it.
    const listed = await eventually(async () => {
      const found = (await owner.call('GET', '/v1/api-keys')).body.data.find((k: { id: number }) => k.id === id);
      return found?.last_used_at ? found : null;
    });
    assert.ok(!('key' in listed), 'the list never holds the key');

    const rolled = await owner.call('POST', `/v1/api-keys/${id}/rotate`, { overlap_hours: 24 });
    assert.equal(rolled.status, 201);
    assert.equal((await svc.request('GET', '/v1/me', { key })).status, 200, 'the old key works during the overlap');
    assert.equal((await svc.request('GET', '/v1/me', { key: rolled.body.data.key })).status, 200);

    const again = await owner.call('POST', `/v1/api-keys/${rolled.body.data.id}/rotate`, {});
    assert.equal(again.status, 201);
    assert.equal((await svc.request('GET', '/v1/me', { key: rolled.body.data.key })).status, 401, 'no overlap: the old key stops at once');

    const revoked = await owner.call('DELETE', `/v1/api-keys/${again.body.data.id}`);
    assert.equal(revoked.status, 200);
    assert.equal((await svc.request('GET', '/v1/me', { key: again.body.data.key })).status, 401);

    const trail = (await owner.call('GET', '/v1/audit-trail?limit=100')).body.data
      .filter((e: { target_type: string; actor: { label: string } }) => e.target_type === 'api_key' && e.actor.label === owner.email)
      .map((e: { action: string }) => e.action);
    assert.deepEqual(trail, ['api_key.revoked', 'api_key.rotated', 'api_key.rotated', 'api_key.created']);
  });

  it('invites by e-mail: accept creates the account and signs in, once; resend replaces the link; revoke ends it', async () => {
    const owner = await member(svc, ws.id, unique('inviter'), 'owner');
    const email = unique('invitee');
    const sent = await owner.call('POST', '/v1/invitations', { email, role: 'editor' });
    assert.equal(sent.status, 201);
    const firstLink = await mailedLink(svc, email, 'invitations/accept');
    const resent = await owner.call('POST', `/v1/invitations/${sent.body.data.id}/resend`);
    assert.equal(resent.status, 200);
    const secondLink = await mailedLink(svc, email, 'invitations/accept');
    assert.notEqual(firstLink, secondLink);
    assert.equal((await svc.request('POST', '/v1/invitations/accept', { body: { token: tokenOf(firstLink) } })).status, 410, 'the replaced link is dead');

    const accepted = await svc.request('POST', '/v1/invitations/accept', { body: { token: tokenOf(secondLink) } });
    assert.equal(accepted.status, 200, accepted.text);
    assert.equal(accepted.body.data.active_workspace.id, ws.id);
    assert.equal(accepted.body.data.active_workspace.role, 'editor');
    const invitee = asPerson(svc, email, sessionCookieOf(accepted.headers), accepted.body.data.csrf_token);
    assert.equal((await invitee.call('GET', '/v1/books')).status, 200);
    const twice = await svc.request('POST', '/v1/invitations/accept', { body: { token: tokenOf(secondLink) } });
    assert.equal(twice.status, 410, 'an invitation link works once');

    const other = await owner.call('POST', '/v1/invitations', { email: unique('revoked'), role: 'viewer' });
    const otherLink = await mailedLink(svc, other.body.data.email, 'invitations/accept');
    assert.equal((await owner.call('DELETE', `/v1/invitations/${other.body.data.id}`)).status, 204);
    assert.equal((await svc.request('POST', '/v1/invitations/accept', { body: { token: tokenOf(otherLink) } })).status, 410);
    assert.equal((await owner.call('POST', '/v1/invitations', { email, role: 'viewer' })).status, 409, 'already a member');
  });

  it('ends a removed member\'s session at once, and keeps the last owner', async () => {
    const other = await svc.workspace({ name: 'Solo' });
    const owner = await member(svc, other.id, unique('solo-owner'), 'owner');
    const editor = await member(svc, other.id, unique('removed'), 'editor');
    assert.equal((await editor.call('GET', '/v1/books')).status, 200);
    const members = (await owner.call('GET', '/v1/members')).body.data;
    const editorId = members.find((m: { email: string }) => m.email === editor.email).user_id;
    const ownerId = members.find((m: { you: boolean }) => m.you).user_id;
    assert.equal((await owner.call('DELETE', `/v1/members/${editorId}`)).status, 204);
    assert.equal((await editor.call('GET', '/v1/books')).status, 401, 'the removed member is refused at once');

    // Leaving (not removed): still signed in, moved to another of one's workspaces.
    const traveller = await member(svc, other.id, unique('traveller'), 'viewer');
    await svc.runtime.services.members.addByOperator(ws.id, traveller.email, 'editor', { type: 'operator' });
    const travellerId = (await traveller.call('GET', '/v1/account')).body.data.user.id;
    assert.equal((await traveller.call('DELETE', `/v1/members/${travellerId}`)).status, 204);
    const moved = await traveller.call('GET', '/v1/account');
    assert.equal(moved.status, 200, 'leaving keeps one signed in');
    assert.equal(moved.body.data.active_workspace.id, ws.id);
    assert.equal((await traveller.call('GET', '/v1/me')).body.data.workspace.id, ws.id);

    const leave = await owner.call('DELETE', `/v1/members/${ownerId}`);
    assert.equal(leave.status, 409);
    const demote = await owner.call('PATCH', `/v1/members/${ownerId}`, { role: 'admin' });
    assert.equal(demote.status, 409);
    assert.match(demote.body.error.message, /last owner/);
  });

  it('answers another workspace\'s member, invitation and key exactly like missing ones', async () => {
    const mine = await member(svc, ws.id, unique('mine'), 'owner');
    const theirs = await svc.workspace({ name: 'Theirs' });
    const theirOwner = await member(svc, theirs.id, unique('theirs'), 'owner');
    const theirKey = (await theirOwner.call('POST', '/v1/api-keys', { name: 't', scopes: ['books:read'] })).body.data;
    const theirInvite = (await theirOwner.call('POST', '/v1/invitations', { email: unique('t'), role: 'viewer' })).body.data;
    const theirMember = (await theirOwner.call('GET', '/v1/members')).body.data[0];
    const pairs: [string, string, unknown][] = [
      ['DELETE', `/v1/api-keys/${theirKey.id}`, undefined],
      ['POST', `/v1/api-keys/${theirKey.id}/rotate`, {}],
      ['DELETE', `/v1/invitations/${theirInvite.id}`, undefined],
      ['POST', `/v1/invitations/${theirInvite.id}/resend`, undefined],
      ['PATCH', `/v1/members/${theirMember.user_id}`, { role: 'viewer' }],
      ['DELETE', `/v1/members/${theirMember.user_id}`, undefined],
    ];
    for (const [method, path, body] of pairs) {
      const theirsAnswer = await mine.call(method, path, body);
      const missing = await mine.call(method, path.replace(/\/\d+/, '/99999999'), body);
      assert.equal(theirsAnswer.status, 404, `${method} ${path}`);
      assert.deepEqual(theirsAnswer.body, missing.body);
    }
    assert.equal((await mine.call('PUT', '/v1/account/active-workspace', { workspace_id: theirs.id })).status, 404);
    assert.equal((await svc.request('GET', '/v1/me', { key: theirKey.key })).status, 200, 'their key still works');
  });

  it('gives the operator a way in: users invite prints a one-time sign-in link', async () => {
    const commands = createAdminCommands(svc.runtime.services);
    const email = unique('operator-made');
    const out = await commands['users.invite']!({ workspace: ws.id, email, role: 'admin' }) as { sign_in_link: string; role: string };
    assert.equal(out.role, 'admin');
    const verified = await svc.request('POST', '/v1/auth/sign-in-links/verify', { body: { token: tokenOf(out.sign_in_link) } });
    assert.equal(verified.status, 200);
    assert.equal(verified.body.data.active_workspace.role, 'admin');
    assert.equal((await svc.request('POST', '/v1/auth/sign-in-links/verify', { body: { token: tokenOf(out.sign_in_link) } })).status, 410);
  });
});

describe('people: passwords (AUTH_PASSWORDS=true) and the first start', () => {
  let svc: TestService;
  let bootstrap: BootstrapInfo | null = null;

  before(async () => {
    svc = await startService({ worker: false, env: { AUTH_PASSWORDS: true, BOOTSTRAP_WORKSPACE: true }, onBootstrap: (info) => { bootstrap = info; } });
  });
  after(() => svc.stop());

  it('prints a one-time link that signs the owner in', async () => {
    assert.ok(bootstrap);
    const info = bootstrap as BootstrapInfo;
    assert.equal(info.ownerEmail, 'owner@localhost');
    const verified = await svc.request('POST', '/v1/auth/sign-in-links/verify', { body: { token: tokenOf(info.signInLink) } });
    assert.equal(verified.status, 200);
    assert.equal(verified.body.data.active_workspace.role, 'owner');
    assert.equal((await svc.request('GET', '/v1/me', { key: info.key })).status, 200);
  });

  it('sets a password (argon2id) and signs in with it; a wrong one and an unknown address answer alike', async () => {
    const methods = await svc.request('GET', '/v1/auth/methods');
    assert.equal(methods.body.data.password, true);
    const email = unique('pw');
    const person = await signIn(svc, email);
    assert.equal((await person.call('PUT', '/v1/account/password', { password: 'short' })).status, 422);
    assert.equal((await person.call('PUT', '/v1/account/password', { password: 'correct horse battery' })).status, 204);
    const { rows } = await svc.runtime.database.runner.executeSql('select password_hash from users where email = $1', [email]);
    const row = rows[0] as { password_hash: string } | undefined;
    assert.match(row!.password_hash, /^\$argon2id\$/);
    const ok = await svc.request('POST', '/v1/auth/password', { body: { email, password: 'correct horse battery' } });
    assert.equal(ok.status, 200);
    const wrong = await svc.request('POST', '/v1/auth/password', { body: { email, password: 'wrong horse battery' } });
    const nobody = await svc.request('POST', '/v1/auth/password', { body: { email: unique('nobody'), password: 'wrong horse battery' } });
    assert.equal(wrong.status, 401);
    assert.deepEqual(nobody.body, wrong.body);
  });
});

describe('people: passwords are off by default', () => {
  it('answers 403 to a password sign-in', async () => {
    const svc = await startService({ worker: false });
    try {
      assert.equal((await svc.request('GET', '/v1/auth/methods')).body.data.password, false);
      const res = await svc.request('POST', '/v1/auth/password', { body: { email: 'a@example.com', password: 'whatever it is' } });
      assert.equal(res.status, 403);
    } finally {
      await svc.stop();
    }
  });
});
