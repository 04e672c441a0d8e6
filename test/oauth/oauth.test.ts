/**
 * OAuth 2.1 through the real service, with oauth4webapi as the client
 * (docs/oauth.md): the code flow with PKCE and consent, refresh and its
 * reuse detection, revocation, introspection, the device flow, tokens on the
 * API, and the security cases, each a test.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import * as oauth from 'oauth4webapi';
import { startService, type TestService } from '../helpers.ts';
import { insertBook } from '../factories.ts';
import { member, type Person } from '../people/people-helpers.ts';
import { bearer, clientOf, codeFlow, discover, finish, insecure, REDIRECT_URI, registerApp, startAuthorization, type RegisteredApp } from './oauth-helpers.ts';

const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}@example.com`;

describe('oauth: authorization server, consent, tokens on the API', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let as: oauth.AuthorizationServer;
  let admin: Person;
  let editor: Person;
  let app: RegisteredApp;

  before(async () => {
    // Many refused tokens on purpose: the per-client limit of failed attempts would answer 429 instead of 401.
    svc = await startService({ worker: false, env: { SIGN_IN_PER_ADDRESS_PER_HOUR: 0, SIGN_IN_PER_CLIENT_PER_HOUR: 0, RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: 0 } });
    ws = await svc.workspace();
    as = await discover(svc);
    admin = await member(svc, ws.id, unique('admin'), 'admin');
    editor = await member(svc, ws.id, unique('editor'), 'editor');
    app = await registerApp(admin);
  });
  after(() => svc.stop());

  it('publishes RFC 8414 metadata: code with S256 only, refresh, device flow, revocation, introspection', () => {
    assert.equal(as.issuer, svc.url);
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(as.response_types_supported, ['code']);
    assert.ok(as.grant_types_supported?.includes('urn:ietf:params:oauth:grant-type:device_code'));
    assert.ok(as.revocation_endpoint && as.introspection_endpoint && as.device_authorization_endpoint);
    assert.equal(as.registration_endpoint, undefined, 'dynamic registration is off by default');
  });

  it('runs the code flow with PKCE through the consent operations; the token acts on the API as a key does', async () => {
    const tokens = await codeFlow(svc, as, editor, app, ws.id);
    assert.match(tokens.access_token, /^fbo_at_/);
    assert.match(tokens.refresh_token!, /^fbo_rt_/);
    const me = await bearer(svc, tokens.access_token, 'GET', '/v1/me');
    assert.equal(me.status, 200, JSON.stringify(me.body));
    assert.equal(me.body.data.auth.method, 'oauth');
    assert.deepEqual(me.body.data.auth.app, { id: app.id, name: 'Design tool', client_id: app.client_id });
    assert.equal(me.body.data.auth.user.email, editor.email);
    assert.deepEqual([...me.body.data.auth.scopes].sort(), ['books:read', 'books:write']);
    const books = await bearer(svc, tokens.access_token, 'GET', '/v1/books');
    assert.equal(books.status, 200);
  });
  it('refreshes: the refresh token rotates on use and the old one stops', async () => {
    const tokens = await codeFlow(svc, as, editor, app, ws.id);
    const { client, auth } = clientOf(app);
    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure));
    assert.match(refreshed.access_token, /^fbo_at_/);
    assert.match(refreshed.refresh_token!, /^fbo_rt_/);
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
    assert.equal((await bearer(svc, refreshed.access_token, 'GET', '/v1/me')).status, 200);
  });

  it('detects a used refresh token presented again and revokes the whole grant', async () => {
    const tokens = await codeFlow(svc, as, editor, app, ws.id);
    const { client, auth } = clientOf(app);
    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure));
    const reuse = await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure);
    assert.equal(reuse.status, 400);
    assert.equal((await reuse.json()).error, 'invalid_grant');
    assert.equal((await bearer(svc, refreshed.access_token, 'GET', '/v1/me')).status, 401, 'the new access token is revoked with the grant');
    const next = await oauth.refreshTokenGrantRequest(as, client, auth, refreshed.refresh_token!, insecure);
    assert.equal(next.status, 400, 'the new refresh token too');
  });

  it('revokes a token (RFC 7009) and introspects (RFC 7662)', async () => {
    const tokens = await codeFlow(svc, as, editor, app, ws.id);
    const { client, auth } = clientOf(app);
    const active = await oauth.processIntrospectionResponse(as, client, await oauth.introspectionRequest(as, client, auth, tokens.access_token, insecure));
    assert.equal(active.active, true);
    assert.equal(active.client_id, app.client_id);
    assert.deepEqual(String(active.scope).split(' ').sort(), ['books:read', 'books:write']);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, tokens.access_token, insecure));
    assert.equal((await bearer(svc, tokens.access_token, 'GET', '/v1/me')).status, 401);
    const inactive = await oauth.processIntrospectionResponse(as, client, await oauth.introspectionRequest(as, client, auth, tokens.access_token, insecure));
    assert.equal(inactive.active, false);
  });

  it('runs the device flow: pending until the person approves through the API', async () => {
    const { client, auth } = clientOf(app);
    const device = await oauth.processDeviceAuthorizationResponse(as, client,
      await oauth.deviceAuthorizationRequest(as, client, auth, new URLSearchParams({ scope: 'books:read' }), insecure));
    assert.equal(device.verification_uri, `${svc.url}/oauth/device`);
    const page = await fetch(device.verification_uri_complete!, { redirect: 'manual' });
    assert.equal(page.status, 302);
    assert.match(page.headers.get('location')!, /^\/app\/oauth\/device\?user_code=/);
    const pending = await oauth.deviceCodeGrantRequest(as, client, auth, device.device_code, insecure);
    assert.equal((await pending.json()).error, 'authorization_pending');

    const details = await editor.call('POST', '/v1/oauth/device', { user_code: device.user_code.toLowerCase() });
    assert.equal(details.status, 200, JSON.stringify(details.body));
    assert.equal(details.body.data.app.name, 'Design tool');
    assert.deepEqual(details.body.data.scopes.map((s: { scope: string }) => s.scope), ['books:read']);
    const approved = await editor.call('POST', '/v1/oauth/device/approve', { user_code: device.user_code, workspace_id: ws.id });
    assert.equal(approved.status, 204, JSON.stringify(approved.body));
    const tokens = await oauth.processDeviceCodeResponse(as, client, await oauth.deviceCodeGrantRequest(as, client, auth, device.device_code, insecure));
    const me = await bearer(svc, tokens.access_token, 'GET', '/v1/me');
    assert.equal(me.status, 200);
    assert.deepEqual(me.body.data.auth.scopes, ['books:read']);
    const again = await editor.call('POST', '/v1/oauth/device/approve', { user_code: device.user_code, workspace_id: ws.id });
    assert.equal(again.status, 404, 'a user code works once');
  });

  it('device flow refused: the device gets access_denied', async () => {
    const { client, auth } = clientOf(app);
    const device = await oauth.processDeviceAuthorizationResponse(as, client,
      await oauth.deviceAuthorizationRequest(as, client, auth, new URLSearchParams({ scope: 'books:read' }), insecure));
    assert.equal((await editor.call('POST', '/v1/oauth/device/deny', { user_code: device.user_code })).status, 204);
    const answer = await oauth.deviceCodeGrantRequest(as, client, auth, device.device_code, insecure);
    assert.equal((await answer.json()).error, 'access_denied');
  });

  it('security: a redirect URI that differs by one character is refused, without redirecting', async () => {
    const started = await startAuthorization(svc, as, editor, app.client_id, { redirectUri: `${REDIRECT_URI}x` });
    assert.equal(started.response.status, 400);
    assert.equal(started.location, '');
    assert.equal((await started.response.json()).error, 'invalid_redirect_uri');
    const short = await startAuthorization(svc, as, editor, app.client_id, { redirectUri: REDIRECT_URI.slice(0, -1) });
    assert.equal(short.response.status, 400);
  });

  it('security: a PKCE downgrade is refused (plain, no challenge, no or a wrong verifier)', async () => {
    for (const challengeMethod of ['plain', null]) {
      const started = await startAuthorization(svc, as, editor, app.client_id, { challengeMethod });
      assert.doesNotMatch(started.location, /consent/, `${challengeMethod}: no consent screen`);
      const error = started.location ? new URL(started.location).searchParams.get('error') : (await started.response.json()).error;
      assert.equal(error, 'invalid_request', String(challengeMethod));
    }
    const started = await startAuthorization(svc, as, editor, app.client_id);
    const callback = await finish(editor, started, { workspaceId: ws.id });
    const code = callback.searchParams.get('code')!;
    for (const verifier of [undefined, oauth.generateRandomCodeVerifier()]) {
      const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: app.client_id });
      if (verifier) form.set('code_verifier', verifier);
      const answer = await fetch(as.token_endpoint!, { method: 'POST', body: form });
      assert.equal(answer.status, 400);
      assert.match((await answer.json()).error, /invalid_grant|invalid_request/);
    }
  });

  it('security: a code used twice fails, and the tokens it gave are revoked', async () => {
    const started = await startAuthorization(svc, as, editor, app.client_id);
    const callback = await finish(editor, started, { workspaceId: ws.id });
    const { client, auth } = clientOf(app);
    const params = oauth.validateAuthResponse(as, client, callback, started.state);
    const first = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, started.verifier, insecure));
    assert.equal((await bearer(svc, first.access_token, 'GET', '/v1/me')).status, 200);
    const second = await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, started.verifier, insecure);
    assert.equal(second.status, 400);
    assert.equal((await second.json()).error, 'invalid_grant');
    assert.equal((await bearer(svc, first.access_token, 'GET', '/v1/me')).status, 401, 'the first access token is revoked');
    const refresh = await oauth.refreshTokenGrantRequest(as, client, auth, first.refresh_token!, insecure);
    assert.equal(refresh.status, 400, 'and its refresh token');
  });

  it('security: a token of workspace A on workspace B\'s book answers 404, like a missing one', async () => {
    const other = await svc.workspace({ name: 'Workspace B' });
    const book = await insertBook(svc, other.id, { name: 'B only' });
    assert.equal((await svc.request('GET', `/v1/books/${book.randomId}`, { key: other.key })).status, 200, 'B sees its book');
    const tokens = await codeFlow(svc, as, editor, app, ws.id);
    const theirs = await bearer(svc, tokens.access_token, 'GET', `/v1/books/${book.randomId}`);
    const missing = await bearer(svc, tokens.access_token, 'GET', `/v1/books/${book.randomId.slice(0, -1)}x`);
    assert.equal(theirs.status, 404);
    assert.equal((await bearer(svc, tokens.access_token, 'DELETE', `/v1/books/${book.randomId}`)).status, 404);
    assert.equal(missing.status, 404);
    assert.equal(theirs.body.error.type, missing.body.error.type);
  });

  it('security: a token whose scopes do not allow a write gets 403 listing its scopes; the role bounds the grant', async () => {
    const viewer = await member(svc, ws.id, unique('viewer'), 'viewer');
    const started = await startAuthorization(svc, as, viewer, app.client_id, { scope: 'books:read books:write' });
    const details = await viewer.call('GET', `/v1/oauth/interactions/${started.uid}`, undefined, { cookie: started.jar.toString() });
    assert.deepEqual(details.body.data.workspaces.find((w: { id: number }) => w.id === ws.id).granted_scopes, ['books:read']);
    const callback = await finish(viewer, started, { workspaceId: ws.id });
    const { client, auth } = clientOf(app);
    const params = oauth.validateAuthResponse(as, client, callback, started.state);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, started.verifier, insecure));
    assert.equal(tokens.scope, 'books:read');
    const write = await bearer(svc, tokens.access_token, 'POST', '/v1/books', { title: 'No', source_url: 'https://example.com/x.pdf' });
    assert.equal(write.status, 403);
    assert.deepEqual(write.body.error.details.granted_scopes, ['books:read']);
  });

  it('security: consent refused sends access_denied to the app', async () => {
    const started = await startAuthorization(svc, as, editor, app.client_id);
    const callback = await finish(editor, started, 'deny');
    assert.equal(callback.searchParams.get('error'), 'access_denied');
    assert.equal(callback.searchParams.get('state'), started.state);
    assert.throws(() => oauth.validateAuthResponse(as, clientOf(app).client, callback, started.state), oauth.AuthorizationResponseError);
  });

  it('security: a confidential app without its secret gets invalid_client', async () => {
    const confidential = await registerApp(admin, { public: false, name: 'Canva-style app' });
    assert.match(confidential.client_secret!, /^fbo_cs_/);
    const started = await startAuthorization(svc, as, editor, confidential.client_id);
    const callback = await finish(editor, started, { workspaceId: ws.id });
    const client = { client_id: confidential.client_id };
    const params = oauth.validateAuthResponse(as, client, callback, started.state);
    const without = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT_URI, started.verifier, insecure);
    assert.equal(without.status, 401);
    assert.equal((await without.json()).error, 'invalid_client');
    const wrong = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic('fbo_cs_wrong'), params, REDIRECT_URI, started.verifier, insecure);
    assert.equal((await wrong.json()).error, 'invalid_client');
    const right = await oauth.processAuthorizationCodeResponse(as, client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(confidential.client_secret!), params, REDIRECT_URI, started.verifier, insecure));
    assert.match(right.access_token, /^fbo_at_/);
  });

  it('sends a signed-out person to sign in first, and only the browser that started a request can consent to it', async () => {
    const signedOut = await startAuthorization(svc, as, null, app.client_id);
    assert.equal(signedOut.response.status, 303);
    assert.match(signedOut.location, /^\/app\/sign-in\?next=%2Fapp%2Foauth%2Fconsent%3Fuid%3D/);
    const started = await startAuthorization(svc, as, editor, app.client_id);
    const elsewhere = await editor.call('POST', `/v1/oauth/interactions/${started.uid}/consent`, { workspace_id: ws.id });
    assert.equal(elsewhere.status, 404, 'without the interaction cookie');
  });

  it('a removed member loses every token at once; connected apps can be listed and revoked', async () => {
    const person = await member(svc, ws.id, unique('leaver'), 'editor');
    const a = await codeFlow(svc, as, person, app, ws.id);
    const b = await codeFlow(svc, as, person, app, ws.id);
    const listed = await person.call('GET', '/v1/account/connected-apps');
    assert.equal(listed.status, 200);
    assert.equal(listed.body.data.length, 2);
    assert.equal(listed.body.data[0].app.name, 'Design tool');
    const revoked = await person.call('DELETE', `/v1/account/connected-apps/${listed.body.data[0].grant_id}`);
    assert.equal(revoked.status, 204);
    const statuses = [(await bearer(svc, a.access_token, 'GET', '/v1/me')).status, (await bearer(svc, b.access_token, 'GET', '/v1/me')).status].sort();
    assert.deepEqual(statuses, [200, 401]);
    assert.equal((await editor.call('DELETE', `/v1/account/connected-apps/${listed.body.data[1].grant_id}`)).status, 404, 'another person\'s grant answers 404');

    const me = await person.call('GET', '/v1/account');
    const removed = await admin.call('DELETE', `/v1/members/${me.body.data.user.id}`);
    assert.equal(removed.status, 204, JSON.stringify(removed.body));
    assert.equal((await bearer(svc, a.access_token, 'GET', '/v1/me')).status, 401);
    assert.equal((await bearer(svc, b.access_token, 'GET', '/v1/me')).status, 401);
  });

  it('tokens cannot do what only a signed-in person may; admins manage apps; another workspace\'s app answers 404', async () => {
    const tokens = await codeFlow(svc, as, admin, app, ws.id, 'books:read webhooks:read');
    assert.equal((await bearer(svc, tokens.access_token, 'GET', '/v1/account')).status, 403);
    assert.equal((await bearer(svc, tokens.access_token, 'GET', '/v1/oauth-apps')).status, 403);
    assert.equal((await editor.call('GET', '/v1/oauth-apps')).status, 403, 'editors do not manage apps');
    const listed = await admin.call('GET', '/v1/oauth-apps');
    assert.ok(listed.body.data.some((a: { client_id: string }) => a.client_id === app.client_id));
    assert.ok(listed.body.data.every((a: Record<string, unknown>) => !('client_secret' in a)));
    const otherWs = await svc.workspace({ name: 'Other' });
    const otherAdmin = await member(svc, otherWs.id, unique('other-admin'), 'admin');
    assert.equal((await otherAdmin.call('DELETE', `/v1/oauth-apps/${app.id}`)).status, 404);
    const doomed = await registerApp(admin, { name: 'Doomed' });
    const doomedTokens = await codeFlow(svc, as, editor, doomed, ws.id);
    assert.equal((await admin.call('DELETE', `/v1/oauth-apps/${doomed.id}`)).status, 204);
    assert.equal((await bearer(svc, doomedTokens.access_token, 'GET', '/v1/me')).status, 401, 'deleting an app ends its tokens');
  });

  it('stores tokens only as hashes', async () => {
    const tokens = await codeFlow(svc, as, editor, app, ws.id);
    const rows = await svc.runtime.database.db.execute(sql`select id, payload::text as payload from oauth_models`);
    const text = JSON.stringify(rows);
    assert.ok(!text.includes(tokens.access_token) && !text.includes(tokens.refresh_token!), 'no plain token in oauth_models');
  });
  it('answers junk sent to the OAuth endpoints with 4xx, never a 500', async () => {
    const long = 'x'.repeat(5000);
    const form = (fields: Record<string, string>) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
    const cases: [string, RequestInit?][] = [
      [`/oauth/authorize?client_id=${long}&response_type=code`],
      ['/oauth/authorize?client_id=unknown&response_type=token&scope=*'],
      [`/oauth/authorize/${long}`],
      ['/oauth/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"grant_type":' }],
      ['/oauth/token', { method: 'POST' }],
      ['/oauth/token', form({ grant_type: 'password', username: 'a', password: 'b', client_id: app.client_id })],
      ['/oauth/token', form({ grant_type: 'refresh_token', refresh_token: `fbo_rt_${long}`, client_id: app.client_id })],
      ['/oauth/token', form({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'h:abc', client_id: app.client_id })],
      ['/oauth/introspect', form({ token: 'fbo_at_nothing' })],
      ['/oauth/revoke', form({ token: long, client_id: app.client_id })],
      ['/oauth/device_authorization', form({ client_id: long })],
      ['/oauth/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }],
      ['/oauth/nothing-here'],
      ['/oauth/device?user_code=%E0%A4%A'],
    ];
    for (const [path, init] of cases) {
      const response = await fetch(svc.url + path, { redirect: 'manual', ...init });
      assert.ok(response.status < 500, `${init?.method ?? 'GET'} ${path.slice(0, 80)}: ${response.status} ${await response.text()}`);
    }
    assert.equal((await bearer(svc, `fbo_at_${long}`, 'GET', '/v1/me')).status, 401);
    assert.equal((await bearer(svc, 'fbo_at_h:abc', 'GET', '/v1/me')).status, 401);
  });
});
