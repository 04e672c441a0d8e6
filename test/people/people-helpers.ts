/**
 * Signing people in through the real API, as the application does: a link
 * asked for, read from the outbox, exchanged for the session cookie.
 */
import type { TestService } from '../helpers.ts';

export interface Person {
  email: string;
  cookie: string;
  csrf: string;
  /** A request with the session cookie (and the CSRF token on writes). */
  call<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: T; headers: Headers }>;
}

/** The last link of `kind` mailed to `email`, from the outbox. */
export async function mailedLink(svc: TestService, email: string, kind: 'sign-in/verify' | 'invitations/accept'): Promise<string> {
  const messages = await svc.runtime.services.mailer.list({ to: email, limit: 10 });
  for (const m of messages) {
    const match = new RegExp(`https?://\\S+/app/${kind}\\?token=[\\w-]+`).exec(m.text);
    if (match) return match[0];
  }
  throw new Error(`No ${kind} link mailed to ${email}`);
}

export function tokenOf(link: string): string {
  return new URL(link).searchParams.get('token')!;
}

export function sessionCookieOf(headers: Headers): string {
  const cookie = headers.getSetCookie().find((c) => c.startsWith('flipbook_session='));
  if (!cookie) throw new Error('No session cookie was set');
  return cookie.split(';')[0]!;
}

export function asPerson(svc: TestService, email: string, cookie: string, csrf: string): Person {
  return {
    email, cookie, csrf,
    async call(method, path, body, headers = {}) {
      const h: Record<string, string> = { cookie, ...headers };
      if (!['GET', 'HEAD'].includes(method) && !('x-csrf-token' in headers)) h['x-csrf-token'] = csrf;
      if (body !== undefined) h['content-type'] = 'application/json';
      const response = await fetch(svc.url + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
    },
  };
}

/** Signs `email` in with a mailed link and returns them with their session. */
export async function signIn(svc: TestService, email: string): Promise<Person> {
  const sent = await svc.request('POST', '/v1/auth/sign-in-links', { body: { email } });
  if (sent.status !== 202) throw new Error(`sign-in link: ${sent.status} ${sent.text}`);
  const token = tokenOf(await mailedLink(svc, email, 'sign-in/verify'));
  const verified = await svc.request('POST', '/v1/auth/sign-in-links/verify', { body: { token } });
  if (verified.status !== 200) throw new Error(`verify: ${verified.status} ${verified.text}`);
  return asPerson(svc, email, sessionCookieOf(verified.headers), verified.body.data.csrf_token);
}

/** A person with `role` in the workspace, signed in (added as the operator would). */
export async function member(svc: TestService, workspaceId: number, email: string, role: string): Promise<Person> {
  await svc.runtime.services.members.addByOperator(workspaceId, email, role, { type: 'operator' });
  const person = await signIn(svc, email);
  const switched = await person.call('PUT', '/v1/account/active-workspace', { workspace_id: workspaceId });
  if (switched.status !== 200) throw new Error(`switch: ${switched.status} ${JSON.stringify(switched.body)}`);
  return person;
}
