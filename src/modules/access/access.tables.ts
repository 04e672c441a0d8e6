import { boolean, index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { books } from '../books/books.tables.ts';
import { workspaces } from '../workspaces/workspaces.tables.ts';
import { instant } from '../../platform/db/columns.ts';


/**
 * A book's access list (the spec's "subscribers"): an e-mail address or a
 * whole domain. While a book has at least one entry, readers must identify
 * through a magic link first (settings.eod_enabled is derived from this).
 */
export const subscribers = pgTable('subscribers', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  bookId: integer('book_id').notNull().references(() => books.id, { onDelete: 'cascade' }),
  /** email | domain */
  type: text('type').notNull(),
  /** Lower-cased address, or lower-cased domain without "@". */
  value: text('value').notNull(),
  createdAt: instant('created_at').notNull().defaultNow(),
}, (t) => [
  uniqueIndex('subscribers_book_type_value_key').on(t.bookId, t.type, t.value),
  index('subscribers_workspace_idx').on(t.workspaceId, t.id),
]);

/** Hosts allowed to frame a book; while a book has any, only they may (settings.domains_enabled). */
export const embedDomains = pgTable('embed_domains', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  bookId: integer('book_id').notNull().references(() => books.id, { onDelete: 'cascade' }),
  domain: text('domain').notNull(),
  includesSubdomains: boolean('includes_subdomains').notNull().default(true),
  createdAt: instant('created_at').notNull().defaultNow(),
}, (t) => [uniqueIndex('embed_domains_book_domain_key').on(t.bookId, t.domain)]);

/** Single-use sign-in links for the access gate. Only a hash of the token is kept. */
export const magicLinks = pgTable('magic_links', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  bookId: integer('book_id').notNull().references(() => books.id, { onDelete: 'cascade' }),
  email: text('email').notNull(),
  tokenHash: text('token_hash').notNull(),
  expiresAt: instant('expires_at').notNull(),
  usedAt: instant('used_at'),
  createdAt: instant('created_at').notNull().defaultNow(),
}, (t) => [
  uniqueIndex('magic_links_token_hash_key').on(t.tokenHash),
  index('magic_links_book_email_idx').on(t.bookId, t.email, t.createdAt),
]);

export type SubscriberRow = typeof subscribers.$inferSelect;
export type EmbedDomainRow = typeof embedDomains.$inferSelect;
