/** The scopes in words, for the consent screen and the OpenAPI document's OAuth flow. */
import type { Scope } from '../../platform/auth/scopes.ts';

/** What each scope lets an app do, in words, for the consent screen. */
export const SCOPE_WORDS: Record<Scope, string> = {
  'analytics:read': 'See the analytics of your books',
  'books:read': 'See your books',
  'books:write': 'Create, change and delete books',
  'brand:read': 'See your brand settings',
  'brand:write': 'Change your brand settings',
  'catalogs:read': 'See your product catalogs',
  'catalogs:write': 'Change your product catalogs',
  'exports:read': 'Export your analytics',
  'subscribers:read': 'See your subscribers and leads',
  'subscribers:write': 'Change your subscribers and access lists',
  'tracked-links:read': 'See your tracked links',
  'tracked-links:write': 'Create and change tracked links',
  'webhooks:read': 'See your webhook subscriptions',
  'webhooks:write': 'Create and change webhook subscriptions',
  'workspace:write': 'Change the workspace itself',
};
