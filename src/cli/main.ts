/**
 * `flipbook`: start the service and administer workspaces and API keys.
 * Every command takes --help; listing and creating commands take --json.
 */
import { Command, Option } from 'commander';
import { SCOPES } from '../platform/auth/scopes.ts';
import { PLANS } from '../platform/auth/plans.ts';
import { ROLES } from '../platform/auth/roles.ts';
import { ConfigError, loadConfig, type Config } from '../platform/config/env.ts';
import { backup, restore, type Manifest } from '../platform/backup/backup.ts';
import { createStorage } from '../platform/storage/index.ts';
import { startRuntime } from '../runtime.ts';
import { connectAdmin } from './admin-client.ts';
import { printTable } from './output.ts';

function config(): Readonly<Config> {
  return loadConfig(process.env);
}

async function withAdmin<T>(run: (admin: Awaited<ReturnType<typeof connectAdmin>>) => Promise<T>): Promise<T> {
  const admin = await connectAdmin(config());
  try {
    return await run(admin);
  } finally {
    await admin.close();
  }
}

/** Progress as it goes: on stdout, or on stderr when stdout carries --json. */
function progressTo(json: boolean | undefined): (line: string) => void {
  return (line) => (json ? process.stderr : process.stdout).write(`${line}\n`);
}

/** The manifest without its per-file list, for --json. */
function summary(manifest: Manifest) {
  return { ...manifest, files: { ...manifest.files, entries: undefined } };
}

function output(json: boolean | undefined, value: unknown, human: () => void): void {
  if (json) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  else human();
}

type KeyOut = { id: number; workspace_id: number; name: string; mode: string; prefix: string; scopes: string[]; revoked_at: string | null; expires_at: string | null; last_used_at: string | null; key?: string };

function printNewKey(key: KeyOut): void {
  process.stdout.write(
    `Created key ${key.id} (${key.mode}, scopes: ${key.scopes.join(' ')}) for workspace ${key.workspace_id}.\n` +
      'Copy it now: it is shown once and only its hash is stored.\n\n' +
      `  ${key.key}\n\n`,
  );
}

const program = new Command('flipbook')
  .description('Flipbook publishing service: run it and administer workspaces and API keys.')
  .showHelpAfterError();

program
  .command('serve', { isDefault: false })
  .description('Start the service: API and workers in one process (default), or one role for scale-out.')
  .addOption(new Option('--role <role>', 'what this process runs').choices(['all', 'api', 'worker']).default('all'))
  .action(async (options: { role: 'all' | 'api' | 'worker' }) => {
    const cfg = config();
    const runtime = await startRuntime(cfg, { api: options.role !== 'worker', worker: options.role !== 'api' });
    runtime.logger.info({ role: options.role, database: cfg.database.kind, storage: cfg.storage.kind }, 'flipbook started');
    let signals = 0;
    const shutdown = (signal: string) => {
      if (++signals > 1) process.exit(1);
      runtime.logger.info({ signal }, 'shutting down: finishing in-flight requests and jobs');
      runtime.stop().then(
        () => process.exit(0),
        (error: unknown) => {
          runtime.logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.on('SIGINT', () => shutdown('SIGINT'));
    process.on('SIGTERM', () => shutdown('SIGTERM'));
  });

program
  .command('migrate')
  .description('Apply database migrations (the service also applies them at start).')
  .action(async () => {
    const cfg = config();
    const runtime = await startRuntime({ ...cfg, BOOTSTRAP_WORKSPACE: false }, { api: false, worker: false, adminChannel: false });
    await runtime.stop();
    process.stdout.write(`Migrations applied (${cfg.database.kind}).\n`);
  });

const workspaces = program.command('workspaces').description('Create and list workspaces.');

workspaces
  .command('create')
  .description('Create a workspace.')
  .requiredOption('--name <name>', 'workspace name')
  .addOption(new Option('--plan <plan>', 'plan').choices([...PLANS]).default('free'))
  .option('--slug <slug>', 'URL slug (default: from the name)')
  .option('--json', 'print JSON')
  .action(async (o: { name: string; plan: string; slug?: string; json?: boolean }) => {
    const created = (await withAdmin((a) => a.run('workspaces.create', { name: o.name, plan: o.plan, slug: o.slug }))) as { id: number; name: string; plan: string; slug: string };
    output(o.json, created, () => process.stdout.write(`Created workspace ${created.id} "${created.name}" (${created.plan}, slug ${created.slug}).\n`));
  });

workspaces
  .command('list')
  .description('List workspaces.')
  .option('--json', 'print JSON')
  .action(async (o: { json?: boolean }) => {
    const rows = (await withAdmin((a) => a.run('workspaces.list'))) as Record<string, unknown>[];
    output(o.json, rows, () => printTable(rows, ['id', 'name', 'slug', 'plan', 'created_at']));
  });

workspaces
  .command('set-plan')
  .description("Change a workspace's plan.")
  .argument('<id>', 'workspace id')
  .addArgument(new Command().createArgument('<plan>', 'new plan').choices([...PLANS]))
  .option('--json', 'print JSON')
  .action(async (id: string, plan: string, o: { json?: boolean }) => {
    const updated = await withAdmin((a) => a.run('workspaces.set-plan', { id, plan }));
    output(o.json, updated, () => process.stdout.write(`Workspace ${id} is now on the ${plan} plan.\n`));
  });

const keys = program.command('keys').description('Create, list, revoke and rotate API keys.');

keys
  .command('create')
  .description('Create an API key; the plain key is printed once.')
  .requiredOption('--workspace <id>', 'workspace id')
  .option('--scopes <scopes>', `comma-separated scopes, or * for all (${SCOPES.join(', ')})`, '*')
  .addOption(new Option('--mode <mode>', 'live or test key').choices(['live', 'test']).default('live'))
  .option('--name <name>', 'a label for the key')
  .option('--json', 'print JSON (includes the plain key)')
  .action(async (o: { workspace: string; scopes: string; mode: string; name?: string; json?: boolean }) => {
    const scopes = o.scopes.split(',').map((s) => s.trim()).filter(Boolean);
    const key = (await withAdmin((a) => a.run('keys.create', { workspace: o.workspace, scopes, mode: o.mode, name: o.name }))) as KeyOut;
    output(o.json, key, () => printNewKey(key));
  });

keys
  .command('list')
  .description('List API keys (never the keys themselves).')
  .option('--workspace <id>', 'only this workspace')
  .option('--json', 'print JSON')
  .action(async (o: { workspace?: string; json?: boolean }) => {
    const rows = (await withAdmin((a) => a.run('keys.list', { workspace: o.workspace }))) as KeyOut[];
    output(o.json, rows, () =>
      printTable(rows.map((r) => ({ ...r, scopes: r.scopes.join(' '), status: r.revoked_at ? 'revoked' : r.expires_at && Date.parse(r.expires_at) <= Date.now() ? 'expired' : 'active' })), ['id', 'workspace_id', 'name', 'mode', 'prefix', 'scopes', 'status', 'expires_at', 'last_used_at']),
    );
  });

keys
  .command('revoke')
  .description('Revoke a key: requests with it get 401 from now on.')
  .argument('<id>', 'key id')
  .option('--json', 'print JSON')
  .action(async (id: string, o: { json?: boolean }) => {
    const key = (await withAdmin((a) => a.run('keys.revoke', { id }))) as KeyOut;
    output(o.json, key, () => process.stdout.write(`Key ${key.id} (${key.prefix}) is revoked.\n`));
  });

keys
  .command('rotate')
  .description('Replace a key with a new one (same workspace, scopes and mode); the old key is revoked, at once or after --overlap-hours.')
  .argument('<id>', 'key id')
  .option('--overlap-hours <hours>', 'keep the old key working this long (0-168)', '0')
  .option('--json', 'print JSON (includes the plain key)')
  .action(async (id: string, o: { overlapHours: string; json?: boolean }) => {
    const key = (await withAdmin((a) => a.run('keys.rotate', { id, overlapHours: o.overlapHours }))) as KeyOut;
    output(o.json, key, () => printNewKey(key));
  });

const usersCommand = program.command('users').description('People: add someone to a workspace and get them in.');

usersCommand
  .command('invite')
  .description('Add a person to a workspace with a role (creating the account, or changing the role) and print a one-time sign-in link for them.')
  .requiredOption('--workspace <id>', 'workspace id')
  .requiredOption('--email <address>', "the person's e-mail address")
  .addOption(new Option('--role <role>', 'their role').choices([...ROLES]).makeOptionMandatory())
  .option('--json', 'print JSON (includes the sign-in link)')
  .action(async (o: { workspace: string; email: string; role: string; json?: boolean }) => {
    const result = (await withAdmin((a) => a.run('users.invite', { workspace: o.workspace, email: o.email, role: o.role }))) as { user_id: number; email: string; role: string; workspace_id: number; sign_in_link: string; expires_in_minutes: number };
    output(o.json, result, () => process.stdout.write(
      `${result.email} is ${result.role} of workspace ${result.workspace_id}. This link signs them in once, within ${result.expires_in_minutes} minutes:\n\n    ${result.sign_in_link}\n\n`,
    ));
  });

const oauthAppsCommand = program.command('oauth-apps').description('OAuth apps: integrations that act for a person in a workspace (docs/oauth.md).');

oauthAppsCommand
  .command('create')
  .description("Register an OAuth app in a workspace and print its client_id and, for a confidential app, its client_secret (shown once).")
  .requiredOption('--workspace <id>', 'workspace id')
  .requiredOption('--name <name>', "the app's name, shown on the consent screen")
  .option('--redirect-uri <uri>', 'an exact redirect URI (repeat for more)', (value: string, previous: string[]) => [...previous, value], [] as string[])
  .option('--public', 'a public app (no secret: PKCE alone), for apps that cannot keep a secret')
  .option('--json', 'print JSON (includes the client secret)')
  .action(async (o: { workspace: string; name: string; redirectUri: string[]; public?: boolean; json?: boolean }) => {
    const created = (await withAdmin((a) => a.run('oauth-apps.create', { workspace: o.workspace, name: o.name, redirectUris: o.redirectUri, public: o.public === true }))) as { id: number; client_id: string; client_secret?: string; name: string; redirect_uris: string[]; public: boolean };
    output(o.json, created, () => process.stdout.write(
      `OAuth app ${created.id} "${created.name}" (${created.public ? 'public' : 'confidential'}).\n\n    client_id:     ${created.client_id}\n${created.client_secret ? `    client_secret: ${created.client_secret}\n\nThe secret is shown once; only a sealed copy is kept.\n` : ''}`,
    ));
  });

const booksCommand = program.command('books').description('Operator actions on books.');

booksCommand
  .command('set-billing-expiry')
  .description("Set when a book's paid access ends (billing_expires_at; read-only through the API). The book stays published; after a grace period the reader shows an expired notice.")
  .argument('<book>', "the book's random_id")
  .argument('<at>', 'ISO 8601 date-time, or "none" to clear')
  .option('--json', 'print JSON')
  .action(async (book: string, at: string, o: { json?: boolean }) => {
    const result = (await withAdmin((a) => a.run('books.set-billing-expiry', { book, at }))) as { random_id: string; billing_expires_at: string | null };
    output(o.json, result, () => process.stdout.write(`Book ${result.random_id}: billing_expires_at = ${result.billing_expires_at ?? 'none'}.
`));
  });

const connectorCommand = program.command('connector').description('The Shopify connector: which API keys are the connector\'s, and its audit log.');

connectorCommand
  .command('grant')
  .description('Make an API key the connector\'s (needed, with SHOPIFY_CLIENT_SECRET, for /v1/integrations/shopify/*). Keys rotated from it stay the connector\'s.')
  .argument('<keyId>', 'API key id (flipbook keys list)')
  .option('--shop-domain <domain>', 'only for this shop (acme.myshopify.com)')
  .option('--json', 'print JSON')
  .action(async (keyId: string, o: { shopDomain?: string; json?: boolean }) => {
    const row = (await withAdmin((a) => a.run('connector.grant', { key: keyId, shopDomain: o.shopDomain }))) as { key_id: number; workspace_id: number; shop_domain: string | null };
    output(o.json, row, () => process.stdout.write(`Key ${row.key_id} is the Shopify connector of workspace ${row.workspace_id}${row.shop_domain ? ` for ${row.shop_domain}` : ''}.\n`));
  });

connectorCommand
  .command('revoke')
  .description('The key is no longer the connector\'s (it keeps its scopes).')
  .argument('<keyId>', 'API key id')
  .option('--json', 'print JSON')
  .action(async (keyId: string, o: { json?: boolean }) => {
    const row = await withAdmin((a) => a.run('connector.revoke', { key: keyId }));
    output(o.json, row, () => process.stdout.write(`Key ${keyId} is no longer the connector's.\n`));
  });

connectorCommand
  .command('events')
  .description('The connector\'s audit log of a workspace, newest first: webhook deliveries (data requests with what was assembled), redactions, renames.')
  .requiredOption('--workspace <id>', 'workspace id')
  .option('--limit <n>', 'how many (1-500)', '50')
  .option('--json', 'print JSON (with each data request\'s data)')
  .action(async (o: { workspace: string; limit: string; json?: boolean }) => {
    const rows = (await withAdmin((a) => a.run('connector.events', { workspace: o.workspace, limit: o.limit }))) as Record<string, unknown>[];
    output(o.json, rows, () => printTable(rows.map((r) => ({ ...r, counts: JSON.stringify(r.counts) })), ['id', 'created_at', 'kind', 'topic', 'action', 'status', 'counts']));
  });

const mailCommand = program.command('mail').description('Outgoing mail: the local outbox when SMTP_URL is not set.');

type MailOut = { id: number; to: string; subject: string; status: string; created_at: string; text: string };

mailCommand
  .command('list')
  .description('List the latest messages, newest first, with their text (sign-in links are in it).')
  .option('--to <address>', 'only messages to this address')
  .option('--limit <n>', 'how many (1-500)', '20')
  .option('--json', 'print JSON')
  .action(async (o: { to?: string; limit: string; json?: boolean }) => {
    const rows = (await withAdmin((a) => a.run('mail.list', { to: o.to, limit: o.limit }))) as MailOut[];
    output(o.json, rows, () => {
      if (rows.length === 0) process.stdout.write('No messages.\n');
      for (const m of rows) process.stdout.write(`#${m.id}  ${m.created_at}  ${m.status}  to ${m.to}\n  ${m.subject}\n\n${m.text.replace(/^/gm, '    ')}\n\n`);
    });
  });

program
  .command('backup')
  .description('Snapshot the database and every stored file into a new directory, with a manifest of counts and SHA-256 checksums, while the service runs.')
  .requiredOption('--to <dir>', 'a new or empty directory')
  .option('--json', 'print the manifest as JSON (progress goes to stderr)')
  .action(async (o: { to: string; json?: boolean }) => {
    const cfg = config();
    const manifest = await backup({
      config: cfg,
      storage: createStorage(cfg),
      to: o.to,
      progress: progressTo(o.json),
      // The embedded database is dumped by the process that holds it: the running service, or this one.
      dumpEmbedded: async (file) => ((await withAdmin((a) => a.run('backup.snapshot', { file }, 60 * 60_000))) as { tables: Record<string, number> }).tables,
    });
    output(o.json, summary(manifest), () => undefined);
  });

program
  .command('restore')
  .description('Bring a backup into an empty deployment (a new DATA_DIR, or an empty PostgreSQL database and storage); checks every checksum first.')
  .requiredOption('--from <dir>', 'a directory written by flipbook backup')
  .option('--json', 'print a summary as JSON (progress goes to stderr)')
  .action(async (o: { from: string; json?: boolean }) => {
    const cfg = config();
    const manifest = await restore({
      config: cfg,
      storage: createStorage(cfg),
      from: o.from,
      progress: progressTo(o.json),
    });
    output(o.json, summary(manifest), () => undefined);
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  const message = error instanceof ConfigError ? error.message : `flipbook: ${(error as Error).message}`;
  process.stderr.write(`${message}\n`);
  const details = (error as { details?: Record<string, string[]> }).details;
  if (details) for (const [field, messages] of Object.entries(details)) process.stderr.write(`  ${field}: ${messages.join(' ')}\n`);
  process.exitCode = 1;
}
