/**
 * What a route declares besides its schema: the scope it needs, the plan
 * feature it needs, and whether it is public. The guard, the idempotency
 * layer and the OpenAPI document all read these.
 */
import type { TSchema } from 'typebox';
import type { Feature } from '../auth/plans.ts';
import type { Scope } from '../auth/scopes.ts';
import type { AuthContext, PersonContext } from '../auth/auth-context.ts';
import type { Role } from '../auth/roles.ts';

export interface RouteGuardConfig {
  /** Scope the key must have. Required unless `public` is set. */
  scope?: Scope | Scope[];
  /** Plan feature the workspace must have (spec: "Company"). */
  feature?: Feature;
  /** No key needed (health, documentation, the public reader). */
  public?: boolean;
  /** Exempt from rate limits (health checks by load balancers). */
  unlimited?: boolean;
  /**
   * Only a signed-in person (the application's session) may call it: people,
   * members, invitations and API keys. Keys and OAuth tokens get 403.
   * `'account'`: no workspace needed; `'workspace'`: in the session's active workspace.
   */
  person?: 'account' | 'workspace';
  /** With `person: 'workspace'`: the least role the person needs there. */
  role?: Role;
  /** The multipart/form-data body, for the OpenAPI document (the handler streams and checks the parts itself). */
  multipartBody?: TSchema;
}

declare module 'fastify' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging
  interface FastifyContextConfig extends RouteGuardConfig {}
  interface FastifyRequest {
    /** Set by the guard on authenticated routes. */
    auth: AuthContext | null;
    /** Set by the guard when a person's session made the request. */
    person: PersonContext | null;
  }
}

/** The signed-in person of a `person` route (the guard has run, so they are present). */
export function personOf(request: { person: PersonContext | null }): PersonContext {
  if (!request.person) throw new Error('personOf() called on a route without a person');
  return request.person;
}

/** The auth context of a guarded route (the guard has run, so it is present). */
export function authOf(request: { auth: AuthContext | null }): AuthContext {
  if (!request.auth) throw new Error('authOf() called on a route without authentication');
  return request.auth;
}
