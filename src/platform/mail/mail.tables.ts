import { index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

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
  createdAt: ts('created_at').notNull().defaultNow(),
  sentAt: ts('sent_at'),
}, (t) => [index('mail_messages_to_idx').on(t.to, t.createdAt)]);

export type MailRow = typeof mailMessages.$inferSelect;
