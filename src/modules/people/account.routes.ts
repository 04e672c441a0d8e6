/** A signed-in person's own account: profile, password, active workspace, sessions, passkeys. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses } from '../../platform/http/openapi.ts';
import { personOf } from '../../platform/http/route-config.ts';
import { Data } from '../../platform/http/schemas.ts';
import { SESSION_COOKIE } from '../../platform/http/guard.ts';
import type { AccountsService } from './accounts.service.ts';
import type { PasskeysService } from './passkeys.service.ts';
import { WebAuthnAnswer, WebAuthnChallenge } from './people.schemas.ts';
import { clearSessionCookie } from './session-cookie.ts';

const ACCOUNT = { person: 'account' } as const;
const AccountRef = Type.Ref('Account');
const NoContent = (description: string) => Type.Null({ description });

export const accountRoutes: FastifyPluginAsyncTypebox<{ accounts: AccountsService; passkeys: PasskeysService; secureCookie: boolean }> = async (app, { accounts, passkeys, secureCookie }) => {

  app.get('/account', {
    schema: {
      operationId: 'getAccount', tags: ['Account'], summary: 'The signed-in person, their workspaces and this session',
      response: { 200: Data(AccountRef) },
    },
    config: ACCOUNT,
  }, async (request) => ({ data: await accounts.account(personOf(request)) }));

  app.patch('/account', {
    schema: {
      operationId: 'updateAccount', tags: ['Account'], summary: 'Change your name',
      body: Type.Object({ name: Type.Union([Type.String({ maxLength: 200 }), Type.Null()]) }),
      response: { 200: Data(AccountRef) },
    },
    config: ACCOUNT,
  }, async (request) => {
    const person = personOf(request);
    await accounts.updateProfile(person.userId, { name: request.body.name });
    return { data: await accounts.account(person) };
  });

  app.put('/account/password', {
    schema: {
      operationId: 'setPassword', tags: ['Account'], summary: 'Set or change your password',
      description: 'Only with `AUTH_PASSWORDS=true` (403 otherwise). 10 to 256 characters, stored as argon2id. Your other sessions are signed out.',
      body: Type.Object({ password: Type.String({ maxLength: 1024 }) }),
      response: { 204: NoContent('The password is set.') },
    },
    config: ACCOUNT,
  }, async (request, reply) => {
    const person = personOf(request);
    await accounts.setPassword(person.userId, request.body.password);
    await accounts.endAllSessions(person.userId, person.sessionId);
    return reply.code(204).send(null);
  });

  app.put('/account/active-workspace', {
    schema: {
      operationId: 'setActiveWorkspace', tags: ['Account'], summary: 'Switch the workspace this session acts in',
      body: Type.Object({ workspace_id: Type.Integer({ minimum: 1 }) }),
      response: { 200: Data(AccountRef), ...errorResponses(404) },
    },
    config: ACCOUNT,
  }, async (request) => {
    const person = personOf(request);
    await accounts.setActiveWorkspace(person, request.body.workspace_id);
    return { data: await accounts.account(person) };
  });

  app.get('/account/sessions', {
    schema: {
      operationId: 'listSessions', tags: ['Account'], summary: 'Your signed-in sessions',
      response: { 200: Data(Type.Array(Type.Ref('Session'))) },
    },
    config: ACCOUNT,
  }, async (request) => ({ data: await accounts.listSessions(personOf(request)) }));

  app.delete('/account/sessions/:sessionId', {
    schema: {
      operationId: 'endSession', tags: ['Account'], summary: 'Sign out one session',
      params: Type.Object({ sessionId: Type.Integer({ minimum: 1 }) }),
      response: { 204: NoContent('The session is ended.'), ...errorResponses(404) },
    },
    config: ACCOUNT,
  }, async (request, reply) => {
    const person = personOf(request);
    await accounts.endSession(person.userId, request.params.sessionId);
    if (request.params.sessionId === person.sessionId) clearSessionCookie(reply, secureCookie);
    return reply.code(204).send(null);
  });

  app.delete('/account/sessions', {
    schema: {
      operationId: 'endAllSessions', tags: ['Account'], summary: 'Sign out everywhere',
      description: 'Ends every session of yours, this one included.',
      response: { 204: NoContent('Every session is ended.') },
    },
    config: ACCOUNT,
  }, async (request, reply) => {
    await accounts.endAllSessions(personOf(request).userId);
    if (request.cookies[SESSION_COOKIE]) clearSessionCookie(reply, secureCookie);
    return reply.code(204).send(null);
  });

  app.get('/account/passkeys', {
    schema: {
      operationId: 'listPasskeys', tags: ['Account'], summary: 'Your passkeys',
      response: { 200: Data(Type.Array(Type.Ref('Passkey'))) },
    },
    config: ACCOUNT,
  }, async (request) => ({ data: await passkeys.list(personOf(request).userId) }));

  app.post('/account/passkeys/options', {
    schema: {
      operationId: 'startPasskeyRegistration', tags: ['Account'], summary: 'Start adding a passkey',
      response: { 200: Data(WebAuthnChallenge), ...errorResponses(403, 409) },
    },
    config: ACCOUNT,
  }, async (request) => ({ data: (await passkeys.registrationOptions(personOf(request).userId)) as { challenge_id: string; options: Record<string, unknown> } }));

  app.post('/account/passkeys', {
    schema: {
      operationId: 'addPasskey', tags: ['Account'], summary: 'Add a passkey',
      body: Type.Object({ ...WebAuthnAnswer.properties, name: Type.Optional(Type.String({ maxLength: 100 })) }),
      response: { 201: Data(Type.Ref('Passkey')), ...errorResponses(403, 409) },
    },
    config: ACCOUNT,
  }, async (request, reply) => reply.code(201).send({ data: await passkeys.register(personOf(request).userId, request.body) }));

  app.delete('/account/passkeys/:passkeyId', {
    schema: {
      operationId: 'removePasskey', tags: ['Account'], summary: 'Remove a passkey',
      params: Type.Object({ passkeyId: Type.Integer({ minimum: 1 }) }),
      response: { 204: NoContent('The passkey is removed.'), ...errorResponses(404) },
    },
    config: ACCOUNT,
  }, async (request, reply) => {
    await passkeys.remove(personOf(request).userId, request.params.passkeyId);
    return reply.code(204).send(null);
  });
};
