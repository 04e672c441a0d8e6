/**
 * Driving OAuth flows through the real service with oauth4webapi as the
 * client: the browser's part (redirects, the provider's cookies, the consent
 * given through /v1 with a signed-in person's session) done with fetch.
 */
import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import type { TestService } from '../helpers.ts';
import type { Person } from '../people/people-helpers.ts';

export const insecure = { [oauth.allowInsecureRequests]: true } as const;
export const REDIRECT_URI = 'https://app.example/callback';

export async function discover(svc: TestService): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(svc.url);
  const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure });
  return oauth.processDiscoveryResponse(issuer, response);
}

export interface RegisteredApp { id: number; client_id: string; client_secret?: string }

export async function registerApp(admin: Person, options: { public?: boolean; name?: string; redirectUris?: string[] } = {}): Promise<RegisteredApp> {
  const created = await admin.call('POST', '/v1/oauth-apps', { name: options.name ?? 'Design tool', redirect_uris: options.redirectUris ?? [REDIRECT_URI], public: options.public ?? true });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.data;
}

export function clientOf(app: RegisteredApp): { client: oauth.Client; auth: oauth.ClientAuth } {
  return {
    client: { client_id: app.client_id },
    auth: app.client_secret ? oauth.ClientSecretBasic(app.client_secret) : oauth.None(),
  };
}

/** A tiny cookie jar: name=value pairs from Set-Cookie. */
export class Jar {
  readonly cookies = new Map<string, string>();
  constructor(initial?: string) {
    if (initial) for (const pair of initial.split(/;\s*/)) this.add(pair);
  }
  private add(pair: string): void {
    const i = pair.indexOf('=');
    if (i > 0) this.cookies.set(pair.slice(0, i), pair.slice(i + 1));
  }
  take(headers: Headers): void {
    for (const c of headers.getSetCookie()) this.add(c.split(';')[0]!);
  }
  toString(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

export async function get(url: string, jar: Jar): Promise<Response> {
  const response = await fetch(url, { redirect: 'manual', headers: { cookie: jar.toString() } });
  jar.take(response.headers);
  return response;
}

export interface Started { uid: string; jar: Jar; state: string; verifier: string; location: string }

/** Starts an authorization request as the person's browser; answers where it was sent. */
export async function startAuthorization(svc: TestService, as: oauth.AuthorizationServer, person: Person | null, clientId: string, options: {
  scope?: string; redirectUri?: string; challengeMethod?: string | null; verifier?: string; resource?: string;
} = {}): Promise<Started & { response: Response }> {
  const verifier = options.verifier ?? oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('client_id', clientId);
  url.searchParams.set('redirect_uri', options.redirectUri ?? REDIRECT_URI);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', options.scope ?? 'books:read books:write');
  url.searchParams.set('state', state);
  if (options.resource) url.searchParams.set('resource', options.resource);
  if (options.challengeMethod !== null) {
    const method = options.challengeMethod ?? 'S256';
    url.searchParams.set('code_challenge', method === 'plain' ? verifier : await oauth.calculatePKCECodeChallenge(verifier));
    url.searchParams.set('code_challenge_method', method);
  }
  const jar = new Jar(person?.cookie);
  const response = await get(url.href, jar);
  const location = response.headers.get('location') ?? '';
  const uid = /uid=([\w-]+)/.exec(decodeURIComponent(location))?.[1] ?? '';
  if (process.env.OAUTH_DEBUG) console.log(response.status, location, await response.clone().text());
  return { uid, jar, state, verifier, location, response };
}

/** Consents (or refuses) through /v1 and follows the browser back: the redirect to the app. */
export async function finish(person: Person, started: Started, decision: { workspaceId: number } | 'deny'): Promise<URL> {
  const headers = { cookie: started.jar.toString() };
  const details = await person.call('GET', `/v1/oauth/interactions/${started.uid}`, undefined, headers);
  assert.equal(details.status, 200, JSON.stringify(details.body));
  const answer = decision === 'deny'
    ? await person.call('POST', `/v1/oauth/interactions/${started.uid}/deny`, undefined, headers)
    : await person.call('POST', `/v1/oauth/interactions/${started.uid}/consent`, { workspace_id: decision.workspaceId }, headers);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const back = await get(answer.body.data.redirect_to, started.jar);
  assert.equal(back.status, 303, await back.text());
  return new URL(back.headers.get('location')!);
}

export interface Tokens { access_token: string; refresh_token?: string; scope?: string; expires_in?: number }

/** The whole code flow: authorization, consent in the workspace, code exchanged for tokens. */
export async function codeFlow(svc: TestService, as: oauth.AuthorizationServer, person: Person, app: RegisteredApp, workspaceId: number, scope?: string, resource?: string): Promise<Tokens> {
  const started = await startAuthorization(svc, as, person, app.client_id, { scope, resource });
  const callback = await finish(person, started, { workspaceId });
  const { client, auth } = clientOf(app);
  const params = oauth.validateAuthResponse(as, client, callback, started.state);
  const response = await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, started.verifier,
    { ...insecure, ...(resource ? { additionalParameters: { resource } } : {}) });
  return oauth.processAuthorizationCodeResponse(as, client, response) as Promise<Tokens>;
}

export async function bearer(svc: TestService, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(svc.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}
