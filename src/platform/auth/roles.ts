/**
 * A person's role in a workspace, and what it allows as the spec's scopes
 * (docs/people-and-teams.md has the table). Roles are ordered: each allows
 * everything the one below it does.
 */
import { SCOPES, type Scope } from './scopes.ts';

export const ROLES = ['viewer', 'editor', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

const VIEWER: readonly Scope[] = ['books:read', 'analytics:read', 'exports:read', 'brand:read', 'catalogs:read', 'subscribers:read', 'tracked-links:read'];
const EDITOR: readonly Scope[] = [...VIEWER, 'books:write', 'subscribers:write', 'tracked-links:write'];
const ADMIN: readonly Scope[] = [...EDITOR, 'brand:write', 'catalogs:write', 'webhooks:read', 'webhooks:write'];

export const ROLE_SCOPES: Readonly<Record<Role, readonly Scope[]>> = {
  viewer: VIEWER,
  editor: EDITOR,
  admin: ADMIN,
  owner: SCOPES,
};

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export function roleRank(role: Role): number {
  return ROLES.indexOf(role);
}

/** Whether `role` is `minimum` or above. */
export function roleAtLeast(role: Role, minimum: Role): boolean {
  return roleRank(role) >= roleRank(minimum);
}

/** The scopes a key made by someone of `role` may hold: `*` only for owners (it includes workspace:write). */
export function scopesGrantableBy(role: Role): readonly string[] {
  return role === 'owner' ? ['*', ...SCOPES] : ROLE_SCOPES[role];
}
