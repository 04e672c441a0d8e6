/**
 * Every flow that handles a secret or a reader's personal data, for the
 * "nothing secret in any log" test (secrets-in-logs.test.ts). Each flow
 * drives the real service and returns the values that must never be logged.
 *
 * A new area that handles secrets adds its flow to SECRET_FLOWS (for
 * example webhook signing secrets: create a subscription, send a test
 * delivery, rotate the secret, and return every secret value seen).
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { eventually, type TestService } from '../helpers.ts';
import { insertBook } from '../factories.ts';
import type { LogCapture } from './log-capture.ts';
import { mailedLink, member, sessionCookieOf, tokenOf } from '../people/people-helpers.ts';
import * as oauth from 'oauth4webapi';
import { clientOf, discover, finish, insecure, REDIRECT_URI, registerApp, startAuthorization } from '../oauth/oauth-helpers.ts';

export interface SecretFlowContext {
  svc: TestService;
  /** A Company workspace with an all-scope key. */
  ws: { id: number; key: string };
  logs: LogCapture;
}

export interface SecretFlow {
  name: string;
  /** Drives the flow; returns every secret or personal value it used. */
  run(ctx: SecretFlowContext): Promise<string[]>;
}

export const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const unique = (prefix: string) => `${prefix}${randomBytes(9).toString('hex')}`;

export async function fetchPublic(svc: TestService, route: string, init: RequestInit & { json?: unknown } = {}) {
  const headers = new Headers(init.headers);
  headers.set('user-agent', BROWSER_UA);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(init.json);
  }
  const response = await fetch(`${svc.url}${route}`, { ...init, headers, body, redirect: 'manual' });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function bulkSettings(svc: TestService, ws: { key: string }, ids: string[], settings: Record<string, unknown>) {
  const read = await svc.request('POST', '/v1/books/bulk-settings/summary', { key: ws.key, body: { book_ids: ids } });
  assert.equal(read.status, 200, read.text);
  return svc.request('POST', '/v1/books/bulk-settings/batches', {
    key: ws.key,
    body: { books: read.body.data.books.map((b: { id: string; settings_revision: string }) => ({ id: b.id, settings_revision: b.settings_revision })), settings },
  });
}

async function waitForBulk(svc: TestService, key: string, id: string) {
  return eventually(async () => {
    const res = await svc.request('GET', `/v1/books/bulk-settings/batches/${id}`, { key });
    return ['completed', 'cancelled'].includes(res.body?.data?.status) && res.body.data.finished_at ? res.body.data : null;
  }, { timeoutMs: 60_000 });
}

async function enableLeadForm(svc: TestService, key: string, randomId: string) {
  const res = await svc.request('PUT', `/v1/books/${randomId}/lead-form`, {
    key, body: { enabled: true, fields: [{ name: 'name', required: true }, { name: 'phone', required: false }, { name: 'email', required: true }] },
  });
  assert.equal(res.status, 200, res.text);
}

export const SECRET_FLOWS: SecretFlow[] = [
  {
    name: 'OAuth: client secret, code, PKCE verifier, access and refresh tokens, device and user codes, tokens in query strings',
    async run({ svc, ws }) {
      const as = await discover(svc);
      const admin = await member(svc, ws.id, `${unique('oauth-admin')}@example.com`, 'admin');
      const app = await registerApp(admin, { public: false, name: 'Secret app' });
      const { client, auth } = clientOf(app);
      const started = await startAuthorization(svc, as, admin, app.client_id);
      const callback = await finish(admin, started, { workspaceId: ws.id });
      const code = callback.searchParams.get('code')!;
      const params = oauth.validateAuthResponse(as, client, callback, started.state);
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, started.verifier, insecure));
      assert.equal((await fetch(`${svc.url}/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status, 200);
      const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure));
      // Tokens put where they do not belong: query strings of the API and of the OAuth endpoints.
      await fetch(`${svc.url}/v1/me?access_token=${refreshed.access_token}`);
      await fetch(`${svc.url}/oauth/token?refresh_token=${refreshed.refresh_token}&code=${code}&client_secret=${app.client_secret}`, { method: 'POST' });
      await fetch(`${svc.url}/oauth/authorize?client_id=${app.client_id}&code_verifier=${started.verifier}&response_type=code`, { redirect: 'manual' });
      const device = await oauth.processDeviceAuthorizationResponse(as, client, await oauth.deviceAuthorizationRequest(as, client, auth, new URLSearchParams({ scope: 'books:read' }), insecure));
      await fetch(device.verification_uri_complete!, { redirect: 'manual' });
      await fetch(`${svc.url}/oauth/token?device_code=${device.device_code}`, { method: 'POST' });
      assert.equal((await admin.call('POST', '/v1/oauth/device/approve', { user_code: device.user_code, workspace_id: ws.id })).status, 204);
      const deviceTokens = await oauth.processDeviceCodeResponse(as, client, await oauth.deviceCodeGrantRequest(as, client, auth, device.device_code, insecure));
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, deviceTokens.access_token, insecure));
      return [
        app.client_secret!, code, started.verifier, tokens.access_token, tokens.refresh_token!, refreshed.access_token, refreshed.refresh_token!,
        device.device_code, device.user_code, device.user_code.replace('-', ''), deviceTokens.access_token, deviceTokens.refresh_token!,
      ];
    },
  },
  {
    name: 'API keys: header, query parameter and its percent-encoded spellings',
    async run({ svc, ws }) {
      const header = await svc.request('GET', '/v1/me', { key: ws.key });
      assert.equal(header.status, 200);
      const wrong = `wsk_live_${randomBytes(32).toString('base64url')}`;
      assert.equal((await svc.request('GET', '/v1/me', { key: wrong })).status, 401);
      const query = await fetch(`${svc.url}/v1/me?api_key=${ws.key}`);
      assert.equal(query.status, 200);
      for (const spelling of ['api%5Fkey', '%61pi_key', 'api%5fkey', '%61%70%69%5f%6b%65%79']) {
        const res = await fetch(`${svc.url}/v1/books?limit=2&${spelling}=${ws.key}`);
        assert.equal(res.status, 400, `${spelling} is refused`);
        assert.equal(((await res.json()) as { error: { type: string } }).error.type, 'BadRequestException');
      }
      assert.equal((await fetch(`${svc.url}/v1/me?API_KEY=${ws.key}`)).status, 401);
      assert.equal((await fetch(`${svc.url}/v1/me?api_key=${wrong}&x=1`)).status, 401);
      // On a public route the key is not read, but the URL is still logged.
      await fetch(`${svc.url}/v1/health?api%5Fkey=${ws.key}&api_key=${ws.key}`);
      return [ws.key, wrong];
    },
  },
  {
    name: 'sign-in links: requested, opened and left unopened; the session cookie; the reader address',
    async run({ svc, ws, logs }) {
      const email = `${unique('reader-')}@example.com`;
      const book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 2 });
      const listed = await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: book.randomId, email } });
      assert.equal(listed.status, 201, listed.text);
      const ask = () => fetchPublic(svc, `/read/${book.randomId}/access`, { method: 'POST', json: { email } });
      assert.equal((await ask()).status, 200);
      assert.equal((await ask()).status, 200);
      const links = (await svc.runtime.services.mailer.list({ to: email })).map((m) => /(\/read\/\S+\/access\/([A-Za-z0-9_-]{43}))/.exec(m.text)!);
      assert.equal(links.length, 2);
      const opened = await fetchPublic(svc, links[0]![1]!);
      assert.equal(opened.status, 303);
      const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
      assert.equal((await fetchPublic(svc, `/read/${book.randomId}`, { headers: { cookie } })).status, 200);
      // Used again: refused, and the token is still not logged.
      assert.equal((await fetchPublic(svc, links[0]![1]!)).status, 410);
      // The request line is logged with a hash prefix in place of the token.
      assert.ok(logs.entries(/incoming request/).some((e) => /\/access\/\[sha256:[0-9a-f]{12}\]$/.test(e.req?.url)), 'the opened link is logged with a hash prefix');
      return [links[0]![2]!, links[1]![2]!, cookie.split('=').slice(1).join('='), email];
    },
  },
  {
    name: 'people: sign-in link, session cookie and CSRF token, invitation link, API keys made and rotated in the application',
    async run({ svc, ws }) {
      const ownerEmail = `${unique('owner-')}@example.org`;
      const owner = await member(svc, ws.id, ownerEmail, 'owner');
      const inviteeEmail = `${unique('invitee-')}@example.org`;
      const invited = await owner.call('POST', '/v1/invitations', { email: inviteeEmail, role: 'editor' });
      assert.equal(invited.status, 201);
      const invitationLink = await mailedLink(svc, inviteeEmail, 'invitations/accept');
      // The application's pages are opened with the tokens in their address.
      await fetchPublic(svc, new URL(invitationLink).pathname + new URL(invitationLink).search);
      const accepted = await svc.request('POST', '/v1/invitations/accept', { body: { token: tokenOf(invitationLink) } });
      assert.equal(accepted.status, 200, accepted.text);
      const inviteeCookie = sessionCookieOf(accepted.headers);
      const key = await owner.call('POST', '/v1/api-keys', { name: 'logged?', scopes: ['books:read'] });
      assert.equal(key.status, 201);
      const rotated = await owner.call('POST', `/v1/api-keys/${key.body.data.id}/rotate`, { overlap_hours: 1 });
      assert.equal(rotated.status, 201);
      const unopenedEmail = `${unique('unopened-')}@example.org`;
      await svc.request('POST', '/v1/auth/sign-in-links', { body: { email: unopenedEmail } });
      const unopened = await mailedLink(svc, unopenedEmail, 'sign-in/verify');
      const signInPage = await mailedLink(svc, ownerEmail, 'sign-in/verify');
      await fetchPublic(svc, new URL(signInPage).pathname + new URL(signInPage).search);
      return [
        tokenOf(signInPage), tokenOf(unopened), tokenOf(invitationLink), owner.cookie.split('=')[1]!, owner.csrf, inviteeCookie.split('=')[1]!,
        accepted.body.data.csrf_token, key.body.data.key, rotated.body.data.key, ownerEmail, inviteeEmail, unopenedEmail,
      ];
    },
  },
  {
    name: 'pdf_password: book update and bulk settings',
    async run({ svc, ws }) {
      const [one, two] = [await insertBook(svc, ws.id), await insertBook(svc, ws.id)];
      const updatePassword = unique('pw-update-');
      const update = await svc.request('PUT', `/v1/books/${one.randomId}`, { key: ws.key, body: { status: 'publish', pdf_password: updatePassword } });
      assert.equal(update.status, 200, update.text);
      const bulkPassword = unique('pw-bulk-');
      const batch = await bulkSettings(svc, ws, [one.randomId, two.randomId], { pdf_password: bulkPassword });
      assert.equal(batch.status, 202, batch.text);
      const done = await waitForBulk(svc, ws.key, batch.body.data.id);
      assert.equal(done.progress.succeeded, 2);
      return [updatePassword, bulkPassword];
    },
  },
  {
    name: 'leads: a reader’s e-mail, name and phone',
    async run({ svc, ws }) {
      const book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 3 });
      await enableLeadForm(svc, ws.key, book.randomId);
      const lead = { email: `${unique('lead-')}@example.org`, name: unique('Zelda Quill '), phone: `+44 20 ${Math.floor(1e7 + Math.random() * 9e7)}` };
      const res = await fetchPublic(svc, `/read/${book.randomId}/lead`, { method: 'POST', json: { session_id: randomUUID(), seq: 0, page: 2, ...lead } });
      assert.equal(res.status, 200, res.text);
      return [lead.email, lead.name, lead.phone];
    },
  },
  {
    name: 'database write failures: the failed statement’s values (passwords, lead data) are not logged',
    async run({ svc, ws, logs }) {
      const runner = svc.runtime.database.runner;
      const [target, bulkTarget, leadBook] = [await insertBook(svc, ws.id), await insertBook(svc, ws.id), await insertBook(svc, ws.id, { status: 'publish', pageCount: 3 })];
      await enableLeadForm(svc, ws.key, leadBook.randomId);
      // The DETAIL carries the whole row, as a constraint violation's detail carries the key's value.
      await runner.executeSql(`
        create function flipbook_test_fail_write() returns trigger language plpgsql as $$
        begin raise exception 'forced write failure' using detail = 'Failing row contains ' || row_to_json(NEW)::text; end $$;
        create trigger flipbook_test_fail_books before update on books for each row
          when (NEW.id in (${target.id}, ${bulkTarget.id}) and NEW.pdf_password is distinct from OLD.pdf_password) execute function flipbook_test_fail_write();
        create trigger flipbook_test_fail_leads before insert on leads for each row execute function flipbook_test_fail_write();`);
      try {
        const password = unique('pw-failing-');
        const update = await svc.request('PUT', `/v1/books/${target.randomId}`, { key: ws.key, body: { status: 'draft', pdf_password: password } });
        assert.equal(update.status, 500, update.text);
        assert.equal(update.body.error.type, 'InternalServerError');
        assert.doesNotMatch(update.text, /forced|pw-failing/);

        const bulkPassword = unique('pw-bulk-failing-');
        const batch = await bulkSettings(svc, ws, [bulkTarget.randomId], { pdf_password: bulkPassword });
        assert.equal(batch.status, 202, batch.text);

        const lead = { email: `${unique('failing-lead-')}@example.net`, name: unique('Yorick Failing ') };
        const submitted = await fetchPublic(svc, `/read/${leadBook.randomId}/lead`, { method: 'POST', json: { session_id: randomUUID(), seq: 0, page: 1, ...lead } });
        assert.equal(submitted.status, 500, submitted.text);

        // The failures were logged (with the statement, not its values), by the request and by the job.
        const failed = (e: Record<string, any>) => JSON.stringify(e.err ?? {}).includes('forced write failure');
        await eventually(async () => logs.entries(/job failed/).some(failed), { timeoutMs: 30_000 });
        const logged = logs.entries(/unhandled error/).filter(failed);
        assert.equal(logged.length, 2, 'both request failures are logged');
        assert.match(logged[0]!.err.message, /^Failed query: update "books"[^]*\nparams: \[REDACTED\]$/);
        return [password, bulkPassword, lead.email, lead.name];
      } finally {
        await runner.executeSql(`drop trigger flipbook_test_fail_books on books; drop trigger flipbook_test_fail_leads on leads; drop function flipbook_test_fail_write();`);
      }
    },
  },
];
