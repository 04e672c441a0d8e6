/**
 * Upgrades keep data (docs/upgrading.md). The code of the last release
 * (RELEASE, taken from this repository's history with `git archive`) starts
 * on an empty database and DATA_DIR, exactly as an operator ran it, and is
 * filled through its own API and reader with every kind of record: a book
 * converted from a PDF with its pages, settings, access list, embed domain,
 * tracked link and lead form; reader visits, clicks and a lead; the brand with
 * its logo; a webhook subscription with a delivery; a catalog with items; an
 * invited person. Then the current code starts on the same database and files
 * (applying its migrations), and every record must read back through the API
 * as the release answered it (new fields may be added, none may change or go),
 * every page image must be served, and the reader must open the book.
 *
 * On PGlite and on PostgreSQL (DATABASE_URL): the migrations of both are run.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { makePdf, makePng } from '../documents.ts';
import { eventually, freePort, scratchPostgres, startService, usingPostgres, type TestService } from '../helpers.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

/**
 * The release the upgrade starts from: the newest main that landed before
 * this test was written (2026-11-25). Move it forward when a release is cut,
 * so the test always covers the step operators take.
 */
const RELEASE = '5277c8ff701931544f1c160211d4192ec51bdf51';
const ROOT = path.resolve(import.meta.dirname, '../..');
const NODE = process.execPath;
const run = promisify(execFile);

/** The release's files, or null when this checkout has no history to take them from (a shallow clone or a tarball). */
async function checkOutRelease(into: string): Promise<string | null> {
  try {
    await run('git', ['-C', ROOT, 'cat-file', '-e', `${RELEASE}^{commit}`]);
  } catch {
    return null;
  }
  const dir = path.join(into, 'release');
  await run('sh', ['-c', `mkdir -p "${dir}" && git -C "${ROOT}" archive --format=tar ${RELEASE} | tar -x -C "${dir}"`]);
  // The release's dependencies are a subset of today's, at the same versions (package-lock.json): share them.
  await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

interface Answer {
  status: number;
  body: any;
}

describe('an upgrade from the last release keeps every record and file', () => {
  let scratch: string;
  let releaseDir: string | null = null;
  let dataDir: string;
  let database: { url: string; drop: () => Promise<void> } | null = null;
  let receiver: Receiver;
  let old: ChildProcess | null = null;
  let oldUrl = '';
  let current: TestService | null = null;
  const env: Record<string, string> = {};

  before(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'flipbook-upgrade-'));
    releaseDir = await checkOutRelease(scratch);
    dataDir = path.join(scratch, 'data');
    if (usingPostgres) database = await scratchPostgres();
    receiver = await startReceiver();
    const port = await freePort();
    oldUrl = `http://127.0.0.1:${port}`;
    Object.assign(env, {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? scratch,
      DATA_DIR: dataDir,
      DATABASE_URL: database?.url ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_BASE_URL: oldUrl,
      LOG_LEVEL: 'silent',
      BOOTSTRAP_WORKSPACE: 'false',
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      RATE_LIMIT_ENDPOINT_PER_MINUTE: '0',
      RATE_LIMIT_WORKSPACE_PER_MINUTE: '0',
      RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '0',
      TRUST_PROXY: 'true',
    });
  });
  after(async () => {
    old?.kill('SIGKILL');
    await current?.stop().catch(() => undefined);
    await receiver?.close();
    await database?.drop().catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
  });

  /** The release's CLI, on the same DATA_DIR or DATABASE_URL as its service. */
  async function releaseCli(...args: string[]): Promise<any> {
    const { stdout } = await run(NODE, [path.join(releaseDir!, 'bin/flipbook.js'), ...args, '--json'], { env, cwd: releaseDir!, maxBuffer: 8 << 20 });
    return JSON.parse(stdout);
  }

  let key = '';
  async function call(base: string, method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const init: RequestInit = { method, headers: { authorization: `Bearer ${key}`, ...headers } };
    if (body instanceof FormData) init.body = body;
    else if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
    const response = await fetch(`${base}${route}`, init);
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body: parsed };
  }
  const oldCall = (method: string, route: string, body?: unknown, headers?: Record<string, string>) => call(oldUrl, method, route, body, headers);
  async function oldOk(method: string, route: string, body?: unknown): Promise<any> {
    const res = await oldCall(method, route, body);
    assert.ok(res.status >= 200 && res.status < 300, `${method} ${route}: ${res.status} ${JSON.stringify(res.body).slice(0, 400)}`);
    return res.body;
  }

  /** What is read back after the upgrade, as the release answered it. */
  const reads: string[] = [];
  const before_: Map<string, unknown> = new Map();
  let bookId = '';
  let readerStatus = 0;

  it('the release starts on an empty deployment and takes every kind of record', async (t) => {
    if (!releaseDir) return t.skip(`release ${RELEASE.slice(0, 7)} is not in this checkout's history`);
    const workspace = await releaseCli('workspaces', 'create', '--name', 'Upgraded', '--plan', 'company');
    const workspaceId = workspace.id;
    assert.ok(workspaceId, JSON.stringify(workspace));
    const created = await releaseCli('keys', 'create', '--workspace', String(workspaceId));
    key = created.key;
    assert.ok(key, JSON.stringify(created));
    await releaseCli('users', 'invite', '--workspace', String(workspaceId), '--email', 'editor@example.com', '--role', 'editor');

    old = spawn(NODE, [path.join(releaseDir, 'bin/flipbook.js'), 'serve'], { env, cwd: releaseDir, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    let exited: number | null = null;
    old.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    old.once('exit', (code) => (exited = code ?? -1));
    await eventually(async () => {
      if (exited !== null) throw new Error(`the release exited with ${exited}: ${stderr}`);
      return (await fetch(`${oldUrl}/v1/health`).catch(() => null))?.ok;
    }, { timeoutMs: 180_000, intervalMs: 250 }).catch((error: Error) => assert.fail(`${error.message}; the release said: ${stderr}`));

    // A book converted from a PDF, published, with settings, access list, embed domain, tracked link and lead form.
    const form = new FormData();
    form.append('files[]', new Blob([new Uint8Array(await makePdf({ pages: 3, links: true }))]), 'Upgrade.pdf');
    const upload = await oldOk('POST', '/v1/books', form);
    const batchId = upload.batch_id ?? upload.data?.batch_id;
    const batch = await eventually(async () => {
      const res = await oldCall('GET', `/v1/batches/${batchId}`);
      return ['completed', 'failed', 'cancelled'].includes(res.body?.data?.status) ? res.body.data : null;
    }, { timeoutMs: 180_000, intervalMs: 250 });
    assert.equal(batch.status, 'completed', JSON.stringify(batch));
    const books = await oldOk('GET', '/v1/books');
    bookId = books.data[0].random_id;
    const book = `/v1/books/${bookId}`;
    await oldOk('PUT', book, { status: 'publish', title: 'Upgraded book', description: 'Kept across the upgrade', flip_sound: true, background: '#224466' });
    const link = await oldOk('POST', `${book}/tracked-links`, { name: 'Newsletter' });
    await oldOk('PUT', `${book}/lead-form`, { enabled: true, title: 'Stay in touch', show_after_page: 1, fields: [{ name: 'name', required: true }, { name: 'email', required: true }] });
    // Reader visits through the reader's own endpoints (before the access list closes the book): a visit from the tracked link, pages read, a click, a lead.
    const reader = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', 'x-forwarded-for': '192.0.2.10' };
    const page = await fetch(link.data.url, { headers: reader });
    assert.equal(page.status, 200);
    const session = randomUUID();
    const events = await oldCall('POST', `/read/${bookId}/events`, {
      session_id: session,
      events: [
        { seq: 0, type: 'session_started' },
        { seq: 1, type: 'page_segment_completed', page: 1, active_ms: 4000 },
        { seq: 2, type: 'page_segment_completed', page: 2, active_ms: 2500 },
        { seq: 3, type: 'link_clicked', page: 1 },
      ],
    }, reader);
    assert.ok(events.status < 300, JSON.stringify(events.body));
    const lead = await oldCall('POST', `/read/${bookId}/lead`, { session_id: session, seq: 4, name: 'Lea Reader', email: 'lead@example.com', page: 1 }, reader);
    assert.ok(lead.status < 300, JSON.stringify(lead.body));

    await oldOk('POST', '/v1/subscribers', { book_id: bookId, email: 'reader@example.com' });
    await oldOk('POST', '/v1/subscribers', { book_id: bookId, email: 'example.org', type: 'domain' });
    await oldOk('POST', `${book}/embed-domains`, { domain: 'shop.example.com' });

    // The brand with its logo.
    const brand = new FormData();
    brand.append('company_name', 'Acme');
    brand.append('primary_color', '#123456');
    brand.append('file', new Blob([new Uint8Array(await makePng(64, 32))], { type: 'image/png' }), 'logo.png');
    await oldOk('POST', '/v1/brand', brand);

    // A webhook subscription and a delivery to a receiver.
    const subscription = await oldOk('POST', '/v1/webhook-subscriptions', { name: 'Receiver', target_url: `${receiver.url}/hook`, event_types: ['subscriber.added'] });
    const subscriptionId = subscription.data.id;
    await oldOk('POST', '/v1/subscribers', { book_id: bookId, email: 'second@example.com' });
    await eventually(async () => {
      const res = await oldCall('GET', `/v1/webhook-subscriptions/${subscriptionId}/deliveries`);
      return res.body?.data?.some((d: { status?: string }) => d.status === 'succeeded' || d.status === 'delivered');
    }, { timeoutMs: 60_000, intervalMs: 250 });

    // A catalog with items.
    const catalog = await oldOk('POST', '/v1/catalogs', { name: 'Spring' });
    const catalogId = catalog.data.catalog.id;
    const upserted = await oldOk('POST', `/v1/catalogs/${catalogId}/items:bulk-upsert`, { items: [['external_item_key=tee', 'title=Tee', 'price=19.90', 'currency=EUR'], ['external_item_key=cap', 'title=Cap', 'price=9.90', 'currency=EUR']] });
    await eventually(async () => {
      const res = await oldCall('GET', `/v1/catalogs/${catalogId}/sync-jobs/${upserted.data.sync_job.id}`);
      return ['completed', 'failed'].includes(res.body?.data?.sync_job?.status);
    }, { timeoutMs: 60_000, intervalMs: 250 });

    // Everything the release answers now is what the upgraded service must answer.
    reads.push(
      '/v1/me',
      '/v1/books',
      book,
      `${book}/pages`,
      `${book}/embed-domains`,
      `${book}/tracked-links`,
      `${book}/lead-form`,
      '/v1/subscribers?pagination[per_page]=50',
      '/v1/brand',
      '/v1/webhook-subscriptions',
      `/v1/webhook-subscriptions/${subscriptionId}/deliveries`,
      '/v1/catalogs',
      `/v1/catalogs/${catalogId}/items`,
      `/v1/analytics/book-view-events?book_id=${bookId}`,
      `/v1/analytics/interaction-events?book_id=${bookId}`,
      `/v1/analytics/audit-log?book_id=${bookId}`,
      `/v1/analytics/readers?book_id=${bookId}&include_anonymous=true`,
      `/v1/analytics/page-performance?book_id=${bookId}`,
    );
    for (const route of reads) {
      const res = await oldCall('GET', route);
      assert.equal(res.status, 200, `${route} on the release: ${JSON.stringify(res.body).slice(0, 300)}`);
      before_.set(route, res.body);
    }
    // The access list now closes the book: its reader asks who is reading.
    readerStatus = (await fetch(`${oldUrl}/read/${bookId}`)).status;

    old.kill('SIGTERM');
    if (exited === null) await new Promise((resolve) => old!.once('exit', resolve));
    old = null;
  });

  it('the current code starts on them, migrates, and reads every record back; every page image and the reader are served', async (t) => {
    if (!releaseDir) return t.skip(`release ${RELEASE.slice(0, 7)} is not in this checkout's history`);
    assert.ok(readerStatus && !old, 'the release did not finish filling the deployment');
    current = await startService({
      dataDir,
      database: database ? { kind: 'postgres', url: database.url, poolSize: 5 } : undefined,
      env: { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', RATE_LIMIT_ENDPOINT_PER_MINUTE: 0, RATE_LIMIT_WORKSPACE_PER_MINUTE: 0, RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: 0 },
    });
    const base = current.url;
    for (const route of reads) {
      const res = await call(base, 'GET', route);
      assert.equal(res.status, 200, `${route} after the upgrade: ${JSON.stringify(res.body).slice(0, 300)}`);
      assertKept(before_.get(route), res.body, route);
    }

    const pages = (await call(base, 'GET', `/v1/books/${bookId}/pages`)).body.data as Record<string, unknown>[];
    assert.equal(pages.length, 3);
    let images = 0;
    for (const page of pages) {
      for (const url of imageUrls(page)) {
        const response = await fetch(new URL(url, base), { headers: { authorization: `Bearer ${key}` } });
        assert.equal(response.status, 200, `${url}`);
        assert.match(response.headers.get('content-type') ?? '', /^image\//, url);
        assert.ok((await response.arrayBuffer()).byteLength > 100, url);
        images++;
      }
    }
    assert.ok(images >= 3, `page images served: ${images}`);
    const reader = await fetch(`${base}/read/${bookId}`);
    assert.equal(reader.status, readerStatus);
    assert.match(await reader.text(), /Upgraded book/);
  });
});

/** A URL of this deployment without its origin (the port differs between the two runs) or its query (signatures); in text, the origin replaced. */
function comparable(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (/^https?:\/\/(127\.0\.0\.1|localhost)(:\d+)?\//.test(value)) return new URL(value).pathname;
  // Addresses inside text (the embed code): the origin only.
  return value.replace(/https?:\/\/(127\.0\.0\.1|localhost)(:\d+)?/g, 'ORIGIN');
}

/** Every field the release answered is still there with the same value; fields the current code adds are allowed. */
function assertKept(was: unknown, now: unknown, where: string): void {
  if (Array.isArray(was)) {
    assert.ok(Array.isArray(now), `${where}: no longer a list`);
    assert.equal(now.length, was.length, `${where}: ${was.length} items before, ${now.length} after`);
    was.forEach((item, i) => assertKept(item, now[i], `${where}[${i}]`));
    return;
  }
  if (was && typeof was === 'object') {
    assert.ok(now && typeof now === 'object', `${where}: no longer an object`);
    for (const [field, value] of Object.entries(was)) {
      // Paging cursors and the request's own id are per answer, not records.
      if (field === 'request_id' || field === 'next_cursor') continue;
      assert.ok(field in (now as object), `${where}.${field}: gone after the upgrade`);
      assertKept(value, (now as Record<string, unknown>)[field], `${where}.${field}`);
    }
    return;
  }
  assert.deepEqual(comparable(now), comparable(was), `${where}: ${JSON.stringify(was)} before, ${JSON.stringify(now)} after`);
}

/** The image addresses a page record carries. */
function imageUrls(page: Record<string, unknown>): string[] {
  const urls: string[] = [];
  const visit = (value: unknown, field: string) => {
    if (typeof value === 'string' && /(image|thumbnail|url)/i.test(field) && /\.(webp|png|jpe?g)(\?|$)|\/pages\/\d+/.test(value)) urls.push(value);
    else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) visit(v, k);
  };
  visit(page, '');
  return urls;
}
