/**
 * Signing in to the application (docs/people-and-teams.md): a mailed link, a
 * passkey, or (with AUTH_PASSWORDS) a password. Public operations: each
 * attempt counts against the address and the client, and no answer tells
 * whether an address has an account.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ERRORS } from '../../platform/errors.ts';
import { assertSameOrigin, SESSION_COOKIE } from '../../platform/http/guard.ts';
import type { ClientRateLimiter } from '../../platform/http/client-rate-limit.ts';
import { errorResponses } from '../../platform/http/openapi.ts';
import { Data } from '../../platform/http/schemas.ts';
import type { AccountsService, StartedSession } from './accounts.service.ts';
import { normalizeEmail } from './accounts.service.ts';
import type { PasskeysService } from './passkeys.service.ts';
import { Email, Token, WebAuthnAnswer, WebAuthnChallenge } from './people.schemas.ts';
import { clearSessionCookie, setSessionCookie } from './session-cookie.ts';

export interface SignInLimits {
  perAddressPerHour: number;
  perClientPerHour: number;
}

export interface AuthRoutesOptions {
  accounts: AccountsService;
  passkeys: PasskeysService;
  limiter: ClientRateLimiter;
  limits: SignInLimits;
  publicOrigin: string;
}

const HOUR = 3_600_000;
const AccountRef = Type.Ref('Account');
// Auth operations count their own attempts (per address and client, hourly), not the general per-IP minute.
const PUBLIC = { public: true, unlimited: true } as const;

export const authRoutes: FastifyPluginAsyncTypebox<AuthRoutesOptions> = async (app, { accounts, passkeys, limiter, limits, publicOrigin }) => {
  const secure = publicOrigin.startsWith('https:');

  /** Counts a sign-in attempt against the client and, when known, the address (both as salted hashes); 429 beyond. */
  async function countAttempt(request: FastifyRequest, email?: string): Promise<void> {
    const rules = [];
    if (limits.perClientPerHour > 0) rules.push({ bucket: 'signin:client', subject: limiter.clientKey(request.ip), max: limits.perClientPerHour, windowMs: HOUR });
    if (email && limits.perAddressPerHour > 0) rules.push({ bucket: 'signin:address', subject: limiter.clientKey(`email:${email}`), max: limits.perAddressPerHour, windowMs: HOUR });
    const wait = await limiter.hit(rules);
    if (wait !== null) throw ERRORS.rateLimited(wait);
  }

  async function signedIn(request: FastifyRequest, reply: FastifyReply, started: StartedSession) {
    // A new session replaces the one this browser had.
    const previous = request.cookies[SESSION_COOKIE];
    if (previous) await accounts.endSessionByToken(previous);
    setSessionCookie(reply, started, secure);
    const resolved = await accounts.authenticate(started.token);
    return { data: await accounts.account(resolved!.person) };
  }

  const meta = (request: FastifyRequest) => ({ userAgent: request.headers['user-agent'] });

  app.get('/auth/methods', {
    schema: {
      operationId: 'getSignInMethods', tags: ['Account'], summary: 'Which sign-in methods are on',
      response: { 200: Data(Type.Object({ sign_in_link: Type.Boolean(), passkey: Type.Boolean(), password: Type.Boolean() })) },
    },
    config: PUBLIC,
  }, async () => ({ data: { sign_in_link: true, passkey: passkeys.available, password: accounts.passwordsEnabled } }));

  app.post('/auth/sign-in-links', {
    schema: {
      operationId: 'sendSignInLink', tags: ['Account'], summary: 'Mail a sign-in link',
      description: 'Mails a one-time link to the application. The answer is the same whether or not the address has an account (the link creates it).',
      body: Type.Object({ email: Email }),
      response: { 202: Data(Type.Object({ sent: Type.Boolean() })), ...errorResponses(403) },
    },
    config: PUBLIC,
  }, async (request, reply) => {
    assertSameOrigin(request, publicOrigin);
    const email = normalizeEmail(request.body.email);
    await countAttempt(request, email);
    await accounts.sendSignInLink(email);
    return reply.code(202).send({ data: { sent: true } });
  });

  app.post('/auth/sign-in-links/verify', {
    schema: {
      operationId: 'verifySignInLink', tags: ['Account'], summary: 'Sign in with a mailed link',
      description: 'Uses the link\'s token (once, before it expires), starts a session and sets the `flipbook_session` cookie.',
      body: Type.Object({ token: Token }),
      response: { 200: Data(AccountRef), ...errorResponses(403, 410) },
    },
    config: PUBLIC,
  }, async (request, reply) => {
    assertSameOrigin(request, publicOrigin);
    await countAttempt(request);
    return signedIn(request, reply, await accounts.signInWithLink(request.body.token, meta(request)));
  });

  app.post('/auth/password', {
    schema: {
      operationId: 'signInWithPassword', tags: ['Account'], summary: 'Sign in with a password',
      description: 'Only with `AUTH_PASSWORDS=true` (403 otherwise). A wrong password and an unknown address answer alike.',
      body: Type.Object({ email: Email, password: Type.String({ minLength: 1, maxLength: 1024 }) }),
      response: { 200: Data(AccountRef), ...errorResponses(401, 403) },
    },
    config: PUBLIC,
  }, async (request, reply) => {
    assertSameOrigin(request, publicOrigin);
    const email = normalizeEmail(request.body.email);
    await countAttempt(request, email);
    return signedIn(request, reply, await accounts.signInWithPassword(email, request.body.password, meta(request)));
  });

  app.post('/auth/passkeys/options', {
    schema: {
      operationId: 'startPasskeySignIn', tags: ['Account'], summary: 'Start signing in with a passkey',
      response: { 200: Data(WebAuthnChallenge), ...errorResponses(403) },
    },
    config: PUBLIC,
  }, async (request) => {
    assertSameOrigin(request, publicOrigin);
    await countAttempt(request);
    return { data: (await passkeys.authenticationOptions()) as { challenge_id: string; options: Record<string, unknown> } };
  });

  app.post('/auth/passkeys/verify', {
    schema: {
      operationId: 'finishPasskeySignIn', tags: ['Account'], summary: 'Sign in with a passkey',
      body: WebAuthnAnswer,
      response: { 200: Data(AccountRef), ...errorResponses(401, 403) },
    },
    config: PUBLIC,
  }, async (request, reply) => {
    assertSameOrigin(request, publicOrigin);
    await countAttempt(request);
    const userId = await passkeys.authenticate(request.body);
    return signedIn(request, reply, await accounts.startSession(userId, meta(request)));
  });

  app.post('/auth/sign-out', {
    schema: {
      operationId: 'signOut', tags: ['Account'], summary: 'Sign out (this session)',
      response: { 204: Type.Null({ description: 'Signed out; the cookie is cleared.' }), ...errorResponses(403) },
    },
    config: PUBLIC,
  }, async (request, reply) => {
    assertSameOrigin(request, publicOrigin);
    const token = request.cookies[SESSION_COOKIE];
    if (token) await accounts.endSessionByToken(token);
    clearSessionCookie(reply, secure);
    return reply.code(204).send(null);
  });
};
