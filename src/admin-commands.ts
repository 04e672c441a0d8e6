/**
 * Operator commands (the `flipbook` CLI). They run against the services
 * directly, or inside the running service through the admin channel; either
 * way the same code does the work.
 */
import type { AdminCommands } from './platform/admin/admin-channel.ts';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Database } from './platform/db/database.ts';
import type { Services } from './services.ts';
import { OPERATOR } from './modules/workspaces/audit-trail.service.ts';

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const int = (v: unknown): number => {
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`Expected a positive integer id, got ${JSON.stringify(v)}`);
  return n;
};

export function createAdminCommands(services: Services, database?: Database): AdminCommands {
  const { workspaces } = services;
  return {
    // `flipbook backup` on the embedded database: the process that holds it dumps it (backup.ts).
    'backup.snapshot': async (a) => {
      const file = str(a.file);
      if (!database?.snapshot) throw new Error('backup.snapshot is for the embedded database; on PostgreSQL the CLI runs pg_dump');
      if (!file || !path.isAbsolute(file)) throw new Error('backup.snapshot needs an absolute file path');
      const { tables, tarball } = await database.snapshot();
      await pipeline(Readable.fromWeb(tarball.stream() as never), createWriteStream(file, { flags: 'wx', mode: 0o600 }));
      return { tables };
    },
    'workspaces.create': async (a) => workspaces.createWorkspace({ name: str(a.name) ?? '', plan: str(a.plan), slug: str(a.slug) }),
    'workspaces.list': async () => workspaces.listWorkspaces(),
    'workspaces.set-plan': async (a) => workspaces.setPlan(int(a.id), str(a.plan) ?? ''),
    'keys.create': async (a) =>
      workspaces.createKey({
        workspaceId: int(a.workspace),
        name: str(a.name),
        scopes: Array.isArray(a.scopes) ? a.scopes.map(String) : [],
        mode: a.mode === 'test' ? 'test' : 'live',
      }),
    'keys.list': async (a) => workspaces.listKeys(a.workspace === undefined ? undefined : int(a.workspace)),
    'keys.revoke': async (a) => workspaces.revokeKey(int(a.id)),
    'keys.rotate': async (a) => workspaces.rotateKey(int(a.id), { overlapHours: a.overlapHours === undefined ? 0 : Number(a.overlapHours) }),
    'users.invite': async (a) => {
      const workspaceId = int(a.workspace);
      const member = await services.members.addByOperator(workspaceId, a.email, a.role, OPERATOR);
      const link = await services.accounts.issueSignInLink(member.email);
      return { user_id: member.userId, email: member.email, role: member.role, workspace_id: workspaceId, sign_in_link: link, expires_in_minutes: services.accounts.signInLinkTtlMinutes };
    },
    'oauth-apps.create': async (a) => services.oauth.createApp({
      workspaceId: int(a.workspace), name: a.name,
      redirectUris: Array.isArray(a.redirectUris) ? a.redirectUris.map(String) : [], public: a.public === true,
    }),
    'mail.list': async (a) =>
      (await services.mailer.list({ to: str(a.to), limit: a.limit === undefined ? undefined : int(a.limit) })).map((m) => ({
        id: m.id, to: m.to, subject: m.subject, status: m.status, error: m.error, created_at: m.createdAt.toISOString(), text: m.text,
      })),
    'connector.grant': async (a) => services.connector.grant(int(a.key), str(a.shopDomain)),
    'connector.revoke': async (a) => services.connector.revokeGrant(int(a.key)),
    'connector.events': async (a) => services.connector.events(int(a.workspace), a.limit === undefined ? undefined : int(a.limit)),
    'books.set-billing-expiry': async (a) => {
      const at = str(a.at);
      const date = !at || at === 'none' ? null : new Date(at);
      if (date && Number.isNaN(date.getTime())) throw new Error(`Expected an ISO 8601 date-time or "none", got ${JSON.stringify(at)}`);
      return services.books.setBillingExpiry(str(a.book) ?? '', date);
    },
  };
}
