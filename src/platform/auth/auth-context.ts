/**
 * Who is calling, resolved once per request by the guard: a workspace API key
 * a signed-in person's session, or an OAuth access token.
 * Services take the workspace from here, so every query is confined to it.
 */
import type { KeyMode } from './api-keys.ts';
import type { Plan } from './plans.ts';
import type { Role } from './roles.ts';

export interface AuthContext {
  workspaceId: number;
  workspace: { name: string; slug: string; canRename: boolean };
  plan: Plan;
  /** The granted scopes: the key's, or the person's role's. */
  scopes: readonly string[];
  method: 'api_key' | 'session' | 'oauth';
  /** The key (method api_key), else null. */
  keyId: number | null;
  /** Display prefix of the key, never enough to use it. */
  keyPrefix: string | null;
  mode: KeyMode | null;
  /** The signed-in person (method session), else null. */
  person: PersonContext | null;
  /** The OAuth app and the person it acts for (method oauth); absent otherwise. */
  oauth?: OAuthContext;
}

/** An OAuth access token's app and person. The person is not a PersonContext: a token is no session. */
export interface OAuthContext {
  appId: number;
  appName: string;
  clientId: string;
  grantId: string;
  userId: number;
  email: string;
  role: Role;
}

/** A signed-in person, with their role in the session's active workspace (null when there is none). */
export interface PersonContext {
  userId: number;
  email: string;
  sessionId: number;
  csrfToken: string;
  activeWorkspaceId: number | null;
  role: Role | null;
}
