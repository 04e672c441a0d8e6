/**
 * Outgoing mail. With SMTP_URL set, messages go out through SMTP
 * (nodemailer); without it they stay in the local outbox (the mail_messages
 * table, listed by `flipbook mail list`) so sign-in links work on a fresh
 * machine. Every message is recorded either way. Bodies and addresses are
 * never logged, in any mode: a sign-in mail holds a usable link and the
 * address is a reader's; the log names the message id, which
 * `flipbook mail list` shows.
 */
import { desc, eq } from 'drizzle-orm';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { mailMessages, type MailRow } from './mail.tables.ts';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  workspaceId?: number;
}

export interface MailerOptions {
  db: Db;
  logger: Logger;
  /** smtp://user:pass@host:587 or smtps://…; empty: local outbox only. */
  smtpUrl: string;
  from: string;
}

export class Mailer {
  private readonly options: MailerOptions;
  private readonly transport: Transporter | null;

  constructor(options: MailerOptions) {
    this.options = options;
    this.transport = options.smtpUrl ? nodemailer.createTransport(options.smtpUrl) : null;
  }

  get mode(): 'smtp' | 'outbox' {
    return this.transport ? 'smtp' : 'outbox';
  }

  /** Sends (or keeps in the outbox) and records the message. A failed SMTP delivery is recorded, then thrown. */
  async send(message: MailMessage): Promise<MailRow> {
    const base = { workspaceId: message.workspaceId ?? null, to: message.to, subject: message.subject, text: message.text, html: message.html ?? null };
    if (!this.transport) {
      const [row] = await this.options.db.insert(mailMessages).values({ ...base, status: 'outbox' }).returning();
      this.options.logger.info({ mailId: row!.id }, 'mail kept in the local outbox (no SMTP_URL): read it with `npx flipbook mail list`');
      return row!;
    }
    try {
      await this.transport.sendMail({ from: this.options.from, to: message.to, subject: message.subject, text: message.text, html: message.html });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      await this.options.db.insert(mailMessages).values({ ...base, status: 'failed', error: reason.slice(0, 1000) });
      this.options.logger.error({ err: error }, 'mail delivery failed');
      throw error;
    }
    const [row] = await this.options.db.insert(mailMessages).values({ ...base, status: 'sent', sentAt: new Date() }).returning();
    return row!;
  }

  /** The latest messages, newest first (the outbox, without SMTP). */
  async list(options: { to?: string; limit?: number } = {}): Promise<MailRow[]> {
    const query = this.options.db.select().from(mailMessages);
    const filtered = options.to ? query.where(eq(mailMessages.to, options.to.toLowerCase())) : query;
    return filtered.orderBy(desc(mailMessages.id)).limit(Math.min(Math.max(options.limit ?? 20, 1), 500));
  }
}
