import { index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { instant } from '../db/columns.ts';


/**
 * Every message the service sends. Without SMTP this table is the outbox
 * (listed by `flipbook mail list`); with SMTP it is the delivery record.
 */
export const mailMessages = pgTable('mail_messages', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  workspaceId: integer('workspace_id'),
  to: text('to').notNull(),
  subject: text('subject').notNull(),
  text: text('text').notNull(),
  html: text('html'),
  /** outbox (no SMTP configured) | sent | failed */
  status: text('status').notNull(),
  error: text('error'),
  createdAt: instant('created_at').notNull().defaultNow(),
  sentAt: instant('sent_at'),
}, (t) => [index('mail_messages_to_idx').on(t.to, t.createdAt)]);

export type MailRow = typeof mailMessages.$inferSelect;
