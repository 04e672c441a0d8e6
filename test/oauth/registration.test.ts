/**
 * OAuth apps made outside the application: dynamic client registration
 * (RFC 7591, public clients only, when OAUTH_DYNAMIC_REGISTRATION=true) and
 * the operator's `oauth-apps create` command; short token lifetimes from the
 * configuration.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import { createAdminCommands } from '../../src/admin-commands.ts';
import { startService, type TestService } from '../helpers.ts';
import { member, type Person } from '../people/people-helpers.ts';
import { bearer, clientOf, codeFlow, discover, insecure, REDIRECT_URI } from './oauth-helpers.ts';

const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}@example.com`;

describe('oauth: dynamic registration, the CLI, lifetimes', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let as: oauth.AuthorizationServer;
  let person: Person;

  before(async () => {
    svc = await startService({ worker: false, env: { OAUTH_DYNAMIC_REGISTRATION: true, OAUTH_ACCESS_TOKEN_TTL_SECONDS: 120, OAUTH_REFRESH_TOKEN_TTL_DAYS: 2, SIGN_IN_PER_ADDRESS_PER_HOUR: 0, SIGN_IN_PER_CLIENT_PER_HOUR: 0 } });
    ws = await svc.workspace();
    as = await discover(svc);
    person = await member(svc, ws.id, unique('editor'), 'editor');
  });
  after(() => svc.stop());

  it('registers a public client (RFC 7591) that then runs the code flow; refuses a confidential one', async () => {
    assert.equal(as.registration_endpoint, `${svc.url}/oauth/register`);
    const registered = await fetch(as.registration_endpoint!, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'An assistant', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' }),
    });
    assert.equal(registered.status, 201, await registered.clone().text());
    const metadata = await registered.json() as { client_id: string; client_secret?: string };
    assert.equal(metadata.client_secret, undefined);
    const tokens = await codeFlow(svc, as, person, { id: 0, client_id: metadata.client_id }, ws.id, 'books:read');
    const me = await bearer(svc, tokens.access_token, 'GET', '/v1/me');
    assert.equal(me.status, 200);
    assert.equal(me.body.data.auth.app.name, 'An assistant');

    // An MCP client names the MCP server as the resource (RFC 8707); the token works there and on the API.
    const forMcp = await codeFlow(svc, as, person, { id: 0, client_id: metadata.client_id }, ws.id, 'books:read', `${svc.url}/mcp`);
    assert.equal((await bearer(svc, forMcp.access_token, 'GET', '/v1/me')).status, 200);
    const tools = await fetch(`${svc.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${forMcp.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    assert.equal(tools.status, 200, await tools.clone().text());
    assert.match(await tools.text(), /list_books|books/);

    const confidential = await fetch(as.registration_endpoint!, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Wants a secret', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'client_secret_basic' }),
    });
    assert.equal(confidential.status, 400);
    assert.equal((await confidential.json()).error, 'invalid_client_metadata');
  });

  it('creates an app from the CLI: client_id, and the secret of a confidential app', async () => {
    const commands = createAdminCommands(svc.runtime.services);
    const made = await commands['oauth-apps.create']!({ workspace: ws.id, name: 'CLI app', redirectUris: [REDIRECT_URI], public: false }) as { id: number; client_id: string; client_secret: string };
    assert.match(made.client_id, /^fbo_app_/);
    assert.match(made.client_secret, /^fbo_cs_/);
    const tokens = await codeFlow(svc, as, person, made, ws.id, 'books:read');
    assert.equal(tokens.expires_in, 120, 'OAUTH_ACCESS_TOKEN_TTL_SECONDS');
    const { client, auth } = clientOf(made);
    const introspected = await oauth.processIntrospectionResponse(as, client, await oauth.introspectionRequest(as, client, auth, tokens.refresh_token!, insecure));
    assert.equal(introspected.active, true);
    const days = (Number(introspected.exp) - Number(introspected.iat)) / 86_400;
    assert.equal(Math.round(days), 2, 'OAUTH_REFRESH_TOKEN_TTL_DAYS');
    const publicApp = await commands['oauth-apps.create']!({ workspace: ws.id, name: 'CLI public', redirectUris: [], public: true }) as { client_id: string; client_secret?: string };
    assert.equal(publicApp.client_secret, undefined);
    // Without redirect URIs: the device flow only.
    const deviceClient = { client_id: publicApp.client_id };
    const device = await oauth.processDeviceAuthorizationResponse(as, deviceClient,
      await oauth.deviceAuthorizationRequest(as, deviceClient, oauth.None(), new URLSearchParams({ scope: 'books:read' }), insecure));
    assert.equal((await person.call('POST', '/v1/oauth/device/approve', { user_code: device.user_code, workspace_id: ws.id })).status, 204);
    const deviceTokens = await oauth.processDeviceCodeResponse(as, deviceClient, await oauth.deviceCodeGrantRequest(as, deviceClient, oauth.None(), device.device_code, insecure));
    assert.equal((await bearer(svc, deviceTokens.access_token, 'GET', '/v1/me')).status, 200);
  });
});
