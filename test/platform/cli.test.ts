import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { scratchPostgres, startService, usingPostgres } from '../helpers.ts';
import type { DatabaseTarget } from '../../src/platform/db/database.ts';

const run = promisify(execFile);
const bin = path.resolve(import.meta.dirname, '../../bin/flipbook.js');

describe('flipbook CLI', () => {
  it('creates a workspace and a key while the service runs, and revokes it', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-cli-'));
    const scratch = usingPostgres ? await scratchPostgres() : null;
    const database: DatabaseTarget = scratch ? { kind: 'postgres', url: scratch.url } : { kind: 'pglite', dataDir: path.join(dataDir, 'pglite') };
    const svc = await startService({ dataDir, database, worker: false, adminChannel: true });
    const env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', DATABASE_URL: scratch?.url ?? '' };
    const cli = async (...args: string[]) => JSON.parse((await run(process.execPath, [bin, ...args, '--json'], { env })).stdout);
    try {
      const workspace = await cli('workspaces', 'create', '--name', 'Northwind Books', '--plan', 'pro');
      assert.equal(workspace.name, 'Northwind Books');
      assert.equal(workspace.plan, 'pro');
      const key = await cli('keys', 'create', '--workspace', String(workspace.id), '--scopes', 'books:read,books:write', '--mode', 'test');
      assert.match(key.key, /^wsk_test_/);
      assert.deepEqual(key.scopes, ['books:read', 'books:write']);

      const me = await svc.request('GET', '/v1/me', { key: key.key });
      assert.equal(me.status, 200);
      assert.equal(me.body.data.workspace.name, 'Northwind Books');

      const listed = await cli('keys', 'list', '--workspace', String(workspace.id));
      assert.equal(listed.length, 1);
      assert.ok(!JSON.stringify(listed).includes(key.key), 'listing never shows the key');

      const revoked = await cli('keys', 'revoke', String(key.id));
      assert.ok(revoked.revoked_at);
      assert.equal((await svc.request('GET', '/v1/me', { key: key.key })).status, 401);

      const workspaces = await cli('workspaces', 'list');
      assert.ok(workspaces.some((w: { id: number }) => w.id === workspace.id));

      // Without SMTP, mail waits in the outbox, which the CLI lists.
      await svc.runtime.services.mailer.send({ to: 'ann@example.com', subject: 'Your link', text: 'Open http://localhost/read/x/access/token' });
      const mail = await cli('mail', 'list', '--to', 'ann@example.com');
      assert.equal(mail.length, 1);
      assert.equal(mail[0].status, 'outbox');
      assert.match(mail[0].text, /access\/token/);

      const bad = await run(process.execPath, [bin, 'keys', 'create', '--workspace', String(workspace.id), '--scopes', 'books:fly'], { env }).catch((e: { code: number; stderr: string }) => e);
      assert.equal((bad as { code: number }).code, 1);
      assert.match((bad as { stderr: string }).stderr, /Unknown scopes: books:fly/);
    } finally {
      await svc.stop();
      await scratch?.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('works on the embedded database when no service runs, and refuses a held database', async () => {
    if (usingPostgres) return;
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-cli-'));
    const env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', DATABASE_URL: '' };
    try {
      const { stdout } = await run(process.execPath, [bin, 'workspaces', 'create', '--name', 'Offline', '--json'], { env });
      assert.equal(JSON.parse(stdout).name, 'Offline');
      // A service holding the lock without an admin socket: the CLI must not open the files.
      const svc = await startService({ dataDir, database: { kind: 'pglite', dataDir: path.join(dataDir, 'pglite') }, worker: false, adminChannel: false });
      try {
        const refused = await run(process.execPath, [bin, 'workspaces', 'list'], { env }).catch((e: { code: number; stderr: string }) => e);
        assert.equal((refused as { code: number }).code, 1);
        assert.match((refused as { stderr: string }).stderr, /holds the embedded database/);
      } finally {
        await svc.stop();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
