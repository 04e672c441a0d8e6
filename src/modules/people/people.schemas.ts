/** Request and response shapes of the people operations (docs/people-and-teams.md). */
import { Type } from 'typebox';
import { ROLES } from '../../platform/auth/roles.ts';
import { DateTime, Nullable } from '../../platform/http/schemas.ts';

export const RoleSchema = Type.Union(ROLES.map((r) => Type.Literal(r)), { description: 'viewer < editor < admin < owner.' });
export const Email = Type.String({ minLength: 3, maxLength: 254, description: 'An e-mail address.' });
export const Token = Type.String({ minLength: 1, maxLength: 200, description: 'The token of the mailed link (its `token` query parameter).' });

const WorkspaceMembership = Type.Object({ id: Type.Integer(), name: Type.String(), slug: Type.String(), plan: Type.String(), role: Type.String() });

export const Account = Type.Object({
  user: Type.Object({ id: Type.Integer(), email: Type.String(), name: Nullable(Type.String()), has_password: Type.Boolean(), created_at: DateTime }),
  workspaces: Type.Array(WorkspaceMembership, { description: 'Every workspace the person belongs to, with their role there.' }),
  active_workspace: Nullable(WorkspaceMembership),
  csrf_token: Type.String({ description: 'Send as `X-CSRF-Token` on every write made with the session cookie.' }),
  session: Type.Object({ id: Type.Integer(), created_at: DateTime, expires_at: DateTime }),
}, { $id: 'Account', title: 'Account' });

export const Session = Type.Object({
  id: Type.Integer(), created_at: DateTime, last_seen_at: DateTime, expires_at: DateTime,
  user_agent: Nullable(Type.String()), current: Type.Boolean({ description: 'The session making this request.' }),
}, { $id: 'Session', title: 'Session' });

export const Passkey = Type.Object({ id: Type.Integer(), name: Type.String(), created_at: DateTime, last_used_at: Nullable(DateTime) }, { $id: 'Passkey', title: 'Passkey' });

export const WebAuthnChallenge = Type.Object({
  challenge_id: Type.String({ description: 'Send back with the browser\'s answer.' }),
  options: Type.Object({}, { additionalProperties: true, description: 'WebAuthn options in their JSON form, for `navigator.credentials` (or @simplewebauthn/browser).' }),
});

export const WebAuthnAnswer = Type.Object({
  challenge_id: Type.String({ minLength: 1, maxLength: 100 }),
  response: Type.Object({}, { additionalProperties: true, description: 'The credential in its JSON form (`PublicKeyCredential.toJSON()`).' }),
});

export const Member = Type.Object({
  user_id: Type.Integer(), email: Type.String(), name: Nullable(Type.String()), role: Type.String(), joined_at: DateTime,
  you: Type.Boolean({ description: 'The person making this request.' }),
}, { $id: 'Member', title: 'Member' });

export const Invitation = Type.Object({
  id: Type.Integer(), email: Type.String(), role: Type.String(),
  invited_by: Nullable(Type.Object({ id: Type.Integer(), email: Type.String() })),
  created_at: DateTime, expires_at: DateTime,
}, { $id: 'Invitation', title: 'Invitation' });

/** The shared shapes, added once to the /v1 scope (the people operations refer to them by $id). */
export const PEOPLE_SCHEMAS = [Account, Session, Passkey, Member, Invitation];
