/** Setting and clearing the application's session cookie. */
import type { FastifyReply } from 'fastify';
import { SESSION_COOKIE } from '../../platform/http/guard.ts';
import type { StartedSession } from './accounts.service.ts';

export function setSessionCookie(reply: FastifyReply, started: StartedSession, secure: boolean): void {
  reply.setCookie(SESSION_COOKIE, started.token, {
    httpOnly: true, sameSite: 'lax', secure, path: '/',
    // The cookie outlives no session; the server slides the session's own expiry with use.
    expires: started.expiresAt,
  });
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  reply.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', secure, path: '/' });
}
