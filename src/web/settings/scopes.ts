import type { Role } from '../api.ts';

/** The API's scopes (docs/people-and-teams.md), in the order the form lists them. */
export const SCOPES = [
  'books:read', 'books:write',
  'analytics:read', 'exports:read',
  'brand:read', 'brand:write',
  'catalogs:read', 'catalogs:write',
  'subscribers:read', 'subscribers:write',
  'tracked-links:read', 'tracked-links:write',
  'webhooks:read', 'webhooks:write',
  'workspace:write',
] as const;

export const ALL_SCOPES = '*';

/** What a key made by this role may hold: only the maker's own scopes (an admin makes no `*` or `workspace:write` key). */
export function scopesFor(role: Role | undefined): { scopes: readonly string[]; all: boolean } {
  if (role === 'owner') return { scopes: SCOPES, all: true };
  if (role === 'admin') return { scopes: SCOPES.filter((s) => s !== 'workspace:write'), all: false };
  return { scopes: [], all: false };
}
