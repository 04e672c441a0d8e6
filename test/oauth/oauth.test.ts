/**
 * OAuth 2.1 through the real service, with oauth4webapi as the client
 * (docs/oauth.md): the code flow with PKCE and consent, refresh and its
 * reuse detection, revocation, introspection, the device flow, tokens on the
 * API, and the security cases, each a test.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import { startService, type TestService } from '../helpers.ts';
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
    svc = await startService({ worker: false, env: { SIGN_IN_PER_ADDRESS_PER_HOUR: 0, SIGN_IN_PER_CLIENT_PER_HOUR: 0 } });
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
});
