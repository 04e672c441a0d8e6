/** Members and invitations of the session's active workspace. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ERRORS } from '../../platform/errors.ts';
import { assertSameOrigin, SESSION_COOKIE } from '../../platform/http/guard.ts';
import type { ClientRateLimiter } from '../../platform/http/client-rate-limit.ts';
import { errorResponses } from '../../platform/http/openapi.ts';
import { authOf } from '../../platform/http/route-config.ts';
import { Data } from '../../platform/http/schemas.ts';
import type { AccountsService } from './accounts.service.ts';
import type { Caller, MembersService } from './members.service.ts';
import { Email, RoleSchema, Token } from './people.schemas.ts';
import { setSessionCookie } from './session-cookie.ts';

const MEMBER = { person: 'workspace' } as const;
const ADMIN = { person: 'workspace', role: 'admin' } as const;
const NoContent = (description: string) => Type.Null({ description });

function callerOf(request: FastifyRequest): Caller {
  const auth = authOf(request);
  if (!auth.person?.role) throw ERRORS.forbidden('Only a person signed in to the application can do this.');
  return { workspaceId: auth.workspaceId, person: { ...auth.person, role: auth.person.role } };
}

export interface MembersRoutesOptions {
  members: MembersService;
  accounts: AccountsService;
  limiter: ClientRateLimiter;
  publicOrigin: string;
}

export const membersRoutes: FastifyPluginAsyncTypebox<MembersRoutesOptions> = async (app, { members, accounts, limiter, publicOrigin }) => {
  const secure = publicOrigin.startsWith('https:');
  const UserId = Type.Object({ userId: Type.Integer({ minimum: 1 }) });
  const InvitationId = Type.Object({ invitationId: Type.Integer({ minimum: 1 }) });

  app.get('/members', {
    schema: { operationId: 'listMembers', tags: ['Members'], summary: 'The workspace\'s members and their roles', response: { 200: Data(Type.Array(Type.Ref('Member'))) } },
    config: MEMBER,
  }, async (request) => {
    const caller = callerOf(request);
    return { data: await members.list(caller.workspaceId, caller.person.userId) };
  });

  app.patch('/members/:userId', {
    schema: {
      operationId: 'updateMember', tags: ['Members'], summary: 'Change a member\'s role',
      description: 'Up to your own role; only an owner changes an owner; the last owner cannot be demoted (409).',
      params: UserId, body: Type.Object({ role: RoleSchema }),
      response: { 200: Data(Type.Ref('Member')), ...errorResponses(404, 409) },
    },
    config: ADMIN,
  }, async (request) => ({ data: await members.changeRole(callerOf(request), request.params.userId, request.body.role) }));

  app.delete('/members/:userId', {
    schema: {
      operationId: 'removeMember', tags: ['Members'], summary: 'Remove a member, or leave',
      description: 'Admins and owners remove members; anyone may remove themselves (leave). The last owner cannot (409). The member\'s sessions in this workspace end at once.',
      params: UserId,
      response: { 204: NoContent('Removed.'), ...errorResponses(404, 409) },
    },
    config: MEMBER,
  }, async (request, reply) => {
    await members.remove(callerOf(request), request.params.userId);
    return reply.code(204).send(null);
  });

  app.get('/invitations', {
    schema: { operationId: 'listInvitations', tags: ['Members'], summary: 'Pending invitations', response: { 200: Data(Type.Array(Type.Ref('Invitation'))) } },
    config: ADMIN,
  }, async (request) => ({ data: await members.listInvitations(callerOf(request).workspaceId) }));

  app.post('/invitations', {
    schema: {
      operationId: 'createInvitation', tags: ['Members'], summary: 'Invite someone by e-mail',
      description: 'Mails a link valid 7 days. The role may not be above your own. A pending invitation to the same address is replaced.',
      body: Type.Object({ email: Email, role: RoleSchema }),
      response: { 201: Data(Type.Ref('Invitation')), ...errorResponses(409) },
    },
    config: ADMIN,
  }, async (request, reply) => reply.code(201).send({ data: await members.invite(callerOf(request), request.body) }));

  app.post('/invitations/:invitationId/resend', {
    schema: {
      operationId: 'resendInvitation', tags: ['Members'], summary: 'Mail an invitation again',
      description: 'A new link (the old one stops working), valid 7 days from now.',
      params: InvitationId,
      response: { 200: Data(Type.Ref('Invitation')), ...errorResponses(404) },
    },
    config: ADMIN,
  }, async (request) => ({ data: await members.resend(callerOf(request), request.params.invitationId) }));

  app.delete('/invitations/:invitationId', {
    schema: {
      operationId: 'revokeInvitation', tags: ['Members'], summary: 'Revoke an invitation',
      params: InvitationId,
      response: { 204: NoContent('Revoked: its link no longer works.'), ...errorResponses(404) },
    },
    config: ADMIN,
  }, async (request, reply) => {
    await members.revoke(callerOf(request), request.params.invitationId);
    return reply.code(204).send(null);
  });

  app.post('/invitations/accept', {
    schema: {
      operationId: 'acceptInvitation', tags: ['Members'], summary: 'Accept an invitation',
      description: 'With the token of the mailed link (once, within 7 days): creates the account when needed, adds the membership, signs in and sets the `flipbook_session` cookie.',
      body: Type.Object({ token: Token }),
      response: { 200: Data(Type.Ref('Account')), ...errorResponses(403, 410) },
    },
    config: { public: true, unlimited: true },
  }, async (request, reply) => {
    assertSameOrigin(request, publicOrigin);
    const wait = await limiter.hit([{ bucket: 'signin:client', subject: limiter.clientKey(request.ip), max: 60, windowMs: 3_600_000 }]);
    if (wait !== null) throw ERRORS.rateLimited(wait);
    const started = await members.accept(request.body.token, { userAgent: request.headers['user-agent'] });
    const previous = request.cookies[SESSION_COOKIE];
    if (previous) await accounts.endSessionByToken(previous);
    setSessionCookie(reply, started, secure);
    const resolved = await accounts.authenticate(started.token);
    return { data: await accounts.account(resolved!.person) };
  });
};
