/**
 * OAuth through the application's screens in Chromium, with oauth4webapi as
 * the app: the code flow with PKCE through the consent screen (the app named,
 * the scopes in words, a select labelled "Workspace", "Allow"), refusal with
 * "Deny", and the device flow through the device page's "Code" field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import * as oauth from 'oauth4webapi';
import { member } from '../people/people-helpers.ts';
import { assertAccessible, heading, launchWebBrowser, openApp, personIn, signInThroughScreen, startWebService, WEB_SKIP, type WebService } from '../web/web-browser.ts';
import { bearer, clientOf, discover, insecure, registerApp, type RegisteredApp } from './oauth-helpers.ts';

describe('OAuth consent and device screens in Chromium', { skip: WEB_SKIP }, () => {
  let svc: WebService;
  let browser: Browser;
  let workspaceId: number;
  let as: oauth.AuthorizationServer;
  let app: RegisteredApp;
  let redirectUri: string;

  before(async () => {
    svc = await startWebService({ RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: 0 });
    workspaceId = (await svc.workspace({ name: 'Acme Publishing' })).id;
    // The application's origin (localhost: passkeys need a domain) is the issuer.
    as = await discover({ ...svc, url: svc.origin });
    // The app's redirect URI on the service's own origin: Chromium resolves no made-up host, and redirects escape page.route().
    redirectUri = `${svc.origin}/test-app/callback`;
    app = await registerApp(await member(svc, workspaceId, 'oauth-admin@example.com', 'admin'), { name: 'Design tool', redirectUris: [redirectUri] });
    browser = await launchWebBrowser();
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  async function authorizeUrl(state: string, verifier: string): Promise<string> {
    const url = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries({ client_id: app.client_id, redirect_uri: redirectUri, response_type: 'code', scope: 'books:read books:write', state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })) url.searchParams.set(k, v);
    return url.href;
  }

  it('runs the code flow with PKCE through the consent screen; Deny sends access_denied', async () => {
    await personIn(svc, workspaceId, 'editor@example.com', 'editor');
    const tab = await openApp(browser);
    try {
      const { page } = tab;
      await signInThroughScreen(page, svc, 'editor@example.com');
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      await page.goto(await authorizeUrl(state, verifier));
      await heading(page, 'Connect an app');
      await page.getByText('Design tool').first().waitFor();
      await page.getByText('Create, change and delete books').waitFor();
      await page.locator('#main').getByLabel('Workspace').selectOption({ label: 'Acme Publishing (editor)' });
      await assertAccessible(page, 'Consent');
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL((url) => url.pathname === '/test-app/callback');
      const { client, auth } = clientOf(app);
      const params = oauth.validateAuthResponse(as, client, new URL(page.url()), state);
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, params, redirectUri, verifier, insecure));
      const me = await bearer(svc, tokens.access_token, 'GET', '/v1/me');
      assert.equal(me.status, 200);
      assert.equal(me.body.data.auth.method, 'oauth');
      assert.equal(me.body.data.auth.user.email, 'editor@example.com');

      // Asked again, the same browser is sent back at once: the grant stands (a new choice needs prompt=consent).
      const again = oauth.generateRandomState();
      await page.goto(await authorizeUrl(again, oauth.generateRandomCodeVerifier()));
      await page.waitForURL((url) => url.pathname === '/test-app/callback');
      assert.ok(new URL(page.url()).searchParams.get('code'));

      const refused = oauth.generateRandomState();
      await page.goto(`${await authorizeUrl(refused, oauth.generateRandomCodeVerifier())}&prompt=consent`);
      await heading(page, 'Connect an app');
      await page.getByRole('button', { name: 'Deny' }).click();
      await page.waitForURL((url) => url.pathname === '/test-app/callback');
      assert.equal(new URL(page.url()).searchParams.get('error'), 'access_denied');

      // Settings → Connected apps: disconnecting stops the token at once.
      await page.goto(`${svc.origin}/app/settings/connected-apps`);
      await heading(page, 'Connected apps');
      await page.getByRole('cell', { name: 'Design tool' }).first().waitFor();
      await assertAccessible(page, 'Connected apps');
      await page.getByRole('button', { name: /^Disconnect/ }).first().click();
      await page.getByText('is disconnected').waitFor();
      assert.equal((await bearer(svc, tokens.access_token, 'GET', '/v1/me')).status, 401);
      assert.deepEqual(tab.problems.filter((p) => !/Failed to load resource/.test(p)), []);
    } finally {
      await tab.close();
    }
  });

  it('registers an app in Settings → OAuth apps: the secret shown once is the real one; deleting it stops the app', async () => {
    await personIn(svc, workspaceId, 'apps-admin@example.com', 'admin');
    const tab = await openApp(browser);
    try {
      const { page } = tab;
      await signInThroughScreen(page, svc, 'apps-admin@example.com');
      await page.getByRole('link', { name: 'OAuth apps' }).click();
      await heading(page, 'OAuth apps');
      // A refusal keeps what was typed and says why in words.
      await page.getByLabel('Name').fill('Print shop');
      await page.getByLabel('Redirect URIs').fill('not a uri');
      await page.getByRole('button', { name: 'Register app' }).click();
      await page.getByText('The app was not registered').waitFor();
      assert.equal(await page.getByLabel('Name').inputValue(), 'Print shop');
      await page.getByLabel('Redirect URIs').fill(`${redirectUri}\n`);
      await page.getByRole('button', { name: 'Register app' }).click();
      await page.getByRole('heading', { level: 2, name: '“Print shop” is registered' }).waitFor();
      await assertAccessible(page, 'OAuth apps with a new app');
      const clientId = await page.getByLabel('Client ID').inputValue();
      const clientSecret = await page.getByLabel('Client secret').inputValue();
      // The shown secret authenticates at the token endpoint (a made-up code is then invalid_grant, not invalid_client).
      const tokenAt = (secret: string) => fetch(as.token_endpoint!, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: 'made-up', redirect_uri: redirectUri, code_verifier: oauth.generateRandomCodeVerifier() }),
      }).then((r) => r.json() as Promise<{ error: string }>);
      assert.equal((await tokenAt(clientSecret)).error, 'invalid_grant');
      assert.equal((await tokenAt(`${clientSecret}x`)).error, 'invalid_client');
      await page.getByRole('button', { name: 'Done' }).click();
      assert.equal(await page.getByLabel('Client secret').count(), 0, 'the secret is shown once');

      await page.getByRole('button', { name: 'Delete app Print shop' }).click();
      await page.getByRole('dialog', { name: 'Delete “Print shop”?' }).getByRole('button', { name: 'Delete app' }).click();
      await page.getByRole('status').filter({ hasText: 'was deleted' }).waitFor();
      assert.equal((await tokenAt(clientSecret)).error, 'invalid_client');
      assert.deepEqual(tab.problems.filter((p) => !/Failed to load resource/.test(p)), []);
    } finally {
      await tab.close();
    }
  });

  it('runs the device flow through the device page', async () => {
    await personIn(svc, workspaceId, 'device@example.com', 'viewer');
    const { client, auth } = clientOf(app);
    const device = await oauth.processDeviceAuthorizationResponse(as, client,
      await oauth.deviceAuthorizationRequest(as, client, auth, new URLSearchParams({ scope: 'books:read' }), insecure));
    const tab = await openApp(browser);
    try {
      const { page } = tab;
      await signInThroughScreen(page, svc, 'device@example.com');
      await page.goto(`${svc.origin}/app/oauth/device`);
      await heading(page, 'Connect a device');
      await page.locator('#main').getByLabel('Code').fill(device.user_code);
      await assertAccessible(page, 'Device code');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByText('See your books').waitFor();
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('status').filter({ hasText: 'is connected' }).waitFor();
      const tokens = await oauth.processDeviceCodeResponse(as, client, await oauth.deviceCodeGrantRequest(as, client, auth, device.device_code, insecure));
      assert.equal((await bearer(svc, tokens.access_token, 'GET', '/v1/me')).status, 200);
    } finally {
      await tab.close();
    }
  });
});
