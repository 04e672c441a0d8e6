/**
 * `flipbook backup` while the service runs and readers send events, then
 * `flipbook restore` into an empty deployment (a new DATA_DIR, and on
 * PostgreSQL a new database): every record answers the same through the API,
 * page images are served, and no event acknowledged before the backup began is
 * lost. Restore refuses a non-empty target and a damaged backup.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { restore } from '../../src/platform/backup/backup.ts';
import { loadConfig } from '../../src/platform/config/env.ts';
import type { DatabaseTarget } from '../../src/platform/db/database.ts';
import { createStorage } from '../../src/platform/storage/index.ts';
import { makePdf, makePng } from '../documents.ts';
import { insertBook } from '../factories.ts';
import { eventually, scratchPostgres, type ApiResponse, sendMultipart, startService, uploadFile, usingPostgres, waitForBatch, type TestService } from '../helpers.ts';
import { startReceiver } from '../webhooks/receiver.ts';

const run = promisify(execFile);
const bin = path.resolve(import.meta.dirname, '../../bin/flipbook.js');
const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

async function deployment() {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-backup-'));
  const scratch = usingPostgres ? await scratchPostgres() : null;
  const database: DatabaseTarget = scratch ? { kind: 'postgres', url: scratch.url, poolSize: 5 } : { kind: 'pglite', dataDir: path.join(dataDir, 'pglite') };
  const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: scratch?.url ?? '', LOG_LEVEL: 'silent' };
  const config = loadConfig({}, { DATA_DIR: dataDir, DATABASE_URL: scratch?.url ?? '' });
  return {
    dataDir,
    database,
    /** Restore in this process (for the refusals: the same code as the command, without its start-up time). */
    restore: (from: string) => restore({ config, storage: createStorage(config), from, progress: () => undefined }),
    cli: (...args: string[]) => run(process.execPath, [bin, ...args], { env, maxBuffer: 16 * 1024 * 1024 }),
    async drop() {
      await scratch?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

const serviceEnv = { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', TRUST_PROXY: true } as const;

/** What the API answers about the workspace; the same after restore, but for the service's own address. */
async function state(svc: TestService, key: string, book: string) {
  const get = async (route: string, query: Record<string, string | number> = {}) => {
    const res = await svc.request('GET', route, { key, query });
    assert.equal(res.status, 200, `${route}: ${res.text}`);
    return JSON.parse(res.text.replaceAll(svc.url, 'ORIGIN'));
  };
  const hooks = await get('/v1/webhook-subscriptions');
  const leads = await fetch(`${svc.url}/v1/exports/books/${book}/leads`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(leads.status, 200);
  return {
    book: await get(`/v1/books/${book}`),
    pages: await get(`/v1/books/${book}/pages`),
    brand: await get('/v1/brand'),
    catalogs: await get('/v1/catalogs'),
    subscribers: await get('/v1/subscribers'),
    hooks,
    deliveries: await Promise.all(hooks.data.map((h: { id: number }) => get(`/v1/webhook-subscriptions/${h.id}/deliveries`))),
    leads: await leads.text(),
    views: await get('/v1/analytics/book-view-events', { book_id: book, limit: 500 }),
    pagePerformance: await get('/v1/analytics/page-performance', { book_id: book }),
  };
}

/** Every image of every page, by URL path: its SHA-256. */
async function pageImages(pages: { images: { url: string }[] }[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const page of pages) {
    for (const image of page.images) {
      const res = await fetch(image.url);
      assert.equal(res.status, 200, image.url);
      out[new URL(image.url).pathname] = createHash('sha256').update(Buffer.from(await res.arrayBuffer())).digest('hex');
    }
  }
  return out;
}

describe('flipbook backup and restore', () => {
  it('backs up a running deployment while readers send events and a conversion runs, and restores it into an empty one', async () => {
    const source = await deployment();
    const target = await deployment();
    const receiver = await startReceiver();
    let svc: TestService | null = await startService({ dataDir: source.dataDir, database: source.database, adminChannel: true, env: serviceEnv });
    let restored: TestService | null = null;
    try {
      const ws = await svc.workspace({ name: 'Northwind' });
      const upload = await uploadFile(svc, ws.key, await makePdf({ pages: 2 }), 'spring.pdf', { status: 'publish' });
      const batch = await waitForBatch(svc, ws.key, upload.body.data.batch_id);
      assert.equal(batch.status, 'completed');
      const book: string = batch.books[0].random_id;

      const brand = await sendMultipart(svc, ws.key, 'POST', '/v1/brand', { company_name: 'Northwind', primary_color: '#112233' }, { field: 'file', bytes: await makePng(64, 64), name: 'logo.png' });
      assert.equal(brand.status, 201, brand.text);
      const catalog = await svc.request('POST', '/v1/catalogs', { key: ws.key, body: { name: 'Spring', source: 'custom' } });
      assert.equal(catalog.status, 202, catalog.text);
      const hook = await svc.request('POST', '/v1/webhook-subscriptions', { key: ws.key, body: { name: 'CRM', target_url: `${receiver.url}/hook`, event_types: ['subscriber.added'] } });
      assert.equal(hook.status, 201, hook.text);
      // An access list gates its book's reader: it goes on a book of its own.
      const gated = (await insertBook(svc, ws.id, { status: 'publish', pageCount: 2 })).randomId;
      const subscriber = await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: gated, email: 'ann@example.com' } });
      assert.ok([200, 201].includes(subscriber.status), subscriber.text);
      await eventually(async () => (await svc!.request('GET', `/v1/webhook-subscriptions/${hook.body.data.id}/deliveries`, { key: ws.key })).body.data.some((d: { status: string }) => d.status === 'succeeded'));
      const form = await svc.request('PUT', `/v1/books/${book}/lead-form`, { key: ws.key, body: { enabled: true } });
      assert.equal(form.status, 200, form.text);

      let ip = 0;
      const post = (route: string, body: unknown) => {
        ip++;
        return fetch(`${svc!.url}${route}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': BROWSER_UA, 'x-forwarded-for': `10.${(ip >> 16) & 255}.${(ip >> 8) & 255}.${ip & 255}` },
          body: JSON.stringify(body),
        });
      };
      const leadSession = randomUUID();
      assert.equal((await post(`/read/${book}/events`, { session_id: leadSession, events: [{ seq: 0, type: 'session_started', page: 1 }] })).status, 200);
      assert.equal((await post(`/read/${book}/lead`, { session_id: leadSession, seq: 1, name: 'Bea Ray', email: 'bea@example.com', page: 1 })).status, 200);

      // Readers keep sending (to a second book, so the first one's analytics hold still to compare) while the backup
      // runs; each acknowledged session is noted with when.
      const busy = (await insertBook(svc, ws.id, { status: 'publish', pageCount: 4 })).randomId;
      const acknowledged: { session: string; at: number }[] = [];
      let sending = true;
      const readers = (async () => {
        while (sending) {
          const session = randomUUID();
          const res = await post(`/read/${busy}/events`, { session_id: session, active_ms: 4000, events: [{ seq: 0, type: 'session_started', page: 1 }, { seq: 1, type: 'page_segment_completed', page: 1, active_ms: 4000 }] });
          if (res.status === 200) acknowledged.push({ session, at: Date.now() });
          else assert.equal(res.status, 429, await res.text());
        }
      })();
      await eventually(async () => acknowledged.length >= 3);
      // And a conversion is running: the backup catches its batch half done, and the restored deployment finishes it.
      const converting = await uploadFile(svc, ws.key, await makePdf({ pages: 80 }), 'converting.pdf');
      assert.equal(converting.status, 202, converting.text);
      const convertingBatch: string = converting.body.data.batch_id;
      await eventually(async () => (await svc!.request('GET', `/v1/batches/${convertingBatch}`, { key: ws.key })).body?.data?.status === 'processing');
      const backupStarted = Date.now();
      const backupDir = path.join(source.dataDir, '..', `${path.basename(source.dataDir)}-backup`);
      const { stdout, stderr } = await source.cli('backup', '--to', backupDir, '--json');
      sending = false;
      await readers;
      const manifest = JSON.parse(stdout);
      assert.match(stderr, /Database: \d+ tables, \d+ rows/);
      assert.equal(manifest.database.kind, usingPostgres ? 'postgres' : 'pglite');
      assert.match(manifest.database.sha256, /^[0-9a-f]{64}$/);
      assert.equal(manifest.database.tables['public.workspaces'], 1);
      assert.ok(manifest.files.count >= 6, `source, pages, logo: ${manifest.files.count}`);
      const before = acknowledged.filter((a) => a.at < backupStarted);
      assert.ok(before.length >= 3);

      const expected = await state(svc, ws.key, book);
      const images = await pageImages(expected.pages.data.map((p: any) => ({ images: p.images.map((i: any) => ({ url: i.url.replace('ORIGIN', svc!.url) })) })));
      await svc.stop();
      svc = null;

      // A damaged backup is refused before anything is written.
      const original = await readFile(path.join(backupDir, 'manifest.json'), 'utf8');
      const victim = JSON.parse(original).files.entries[0].key as string;
      await appendFile(path.join(backupDir, 'files', victim), 'x');
      await assert.rejects(target.restore(backupDir), new RegExp(`damaged; nothing was restored\\.\n  files/${victim.replaceAll('.', '\\.')}: checksum differs`));
      await rm(path.join(backupDir, 'files', victim));
      await run('cp', [path.join(source.dataDir, 'files', victim), path.join(backupDir, 'files', victim)]);

      const restoredOut = await target.cli('restore', '--from', backupDir);
      assert.match(restoredOut.stdout, /every table's count matches the manifest/);
      assert.match(restoredOut.stdout, /Restore complete/);

      // The target is no longer empty: a second restore is refused with the reason.
      await assert.rejects(target.restore(backupDir), usingPostgres ? /The target database already has \d+ tables .*restore needs an empty database/ : /already holds a database: restore needs an empty deployment/);

      restored = await startService({ dataDir: target.dataDir, database: target.database, env: serviceEnv });
      const actual = await state(restored, ws.key, book);
      assert.deepEqual(actual.book, expected.book);
      assert.deepEqual(actual.pages, expected.pages);
      assert.deepEqual(actual.brand, expected.brand);
      assert.deepEqual(actual.catalogs, expected.catalogs);
      assert.deepEqual(actual.subscribers, expected.subscribers);
      assert.deepEqual(actual.hooks, expected.hooks);
      assert.deepEqual(actual.deliveries, expected.deliveries);
      assert.equal(actual.leads, expected.leads);
      assert.match(actual.leads, /bea@example\.com/);
      const restoredImages = await pageImages(actual.pages.data.map((p: any) => ({ images: p.images.map((i: any) => ({ url: i.url.replace('ORIGIN', restored!.url) })) })));
      assert.deepEqual(restoredImages, images);
      const logo: string = actual.brand.data.brand.logo;
      assert.match(logo, /^ORIGIN\//);
      assert.equal((await fetch(logo.replace('ORIGIN', restored.url))).status, 200);

      // The conversion the backup caught in flight is finished by the restored deployment's worker.
      const finished = await waitForBatch(restored, ws.key, convertingBatch, 240_000);
      assert.equal(finished.status, 'completed', JSON.stringify(finished));
      assert.equal(finished.books[0].page_count, 80);

      // No event acknowledged before the backup began is lost (those after it may or may not be in it).
      for (const { session } of before) {
        const res: ApiResponse = await restored.request('GET', '/v1/analytics/interaction-events', { key: ws.key, query: { book_id: busy, session_id: session } });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.data.length, 2, `session ${session} acknowledged before the backup`);
      }
    } finally {
      await svc?.stop();
      await restored?.stop();
      await receiver.close();
      await rm(path.join(source.dataDir, '..', `${path.basename(source.dataDir)}-backup`), { recursive: true, force: true });
      await source.drop();
      await target.drop();
    }
  });
});
