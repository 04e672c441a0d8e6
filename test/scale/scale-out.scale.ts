/**
 * npm run test:scale — the "Scaling out" claim of docs/self-hosting.md, proved with counts:
 * 2 API and 2 worker processes of the real service (`flipbook serve --role
 * api|worker`) on one PostgreSQL (a scratch database), one Redis and one
 * S3-compatible bucket, behind a round-robin proxy (test/scale/cluster.ts).
 *
 * Needs DATABASE_URL (PostgreSQL) and Redis (REDIS_URL, default
 * redis://127.0.0.1:6379); skips with a message without them. Every count is
 * printed (`# …` lines), so the run is also the figure sheet of
 * docs/self-hosting.md ("The tested recipe").
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { Redis } from 'ioredis';
import pg from 'pg';
import sharp from 'sharp';
import { makePdf } from '../documents.ts';
import { eventually, roomInRateLimitWindow } from '../helpers.ts';
import { startCluster, type Cluster, type FlipbookProcess } from './cluster.ts';

const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

async function redisReachable(): Promise<boolean> {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

const skip = !process.env.DATABASE_URL
  ? 'the multi-process test needs PostgreSQL: set DATABASE_URL'
  : !(await redisReachable()) ? 'the multi-process test needs Redis (REDIS_URL, default redis://127.0.0.1:6379)' : false;

const figure = (text: string) => process.stdout.write(`# ${text}\n`);

interface Res { status: number; body: any; text: string; headers: Headers }

async function call(base: string, method: string, route: string, key: string | null, body?: unknown, headers: Record<string, string> = {}): Promise<Res> {
  const response = await fetch(base + route, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: response.status, body: parsed, text, headers: response.headers };
}

async function upload(base: string, key: string, pdf: Buffer, name: string, headers: Record<string, string> = {}): Promise<Res> {
  const form = new FormData();
  form.append('status', 'publish');
  form.append('files[]', new Blob([new Uint8Array(pdf)]), name);
  const response = await fetch(`${base}/v1/books`, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...headers }, body: form });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text), text, headers: response.headers };
}

describe('scale-out: 2 API + 2 worker processes on PostgreSQL, Redis and S3', { skip }, () => {
  let cluster: Cluster;
  let sql: pg.Client;
  let key: string;
  let workspaceId: number;
  const proxy = () => cluster.proxy.url;
  const q = async <T = any>(text: string, values: unknown[] = []): Promise<T[]> => (await sql.query(text, values)).rows as T[];

  async function waitForBatches(ids: string[], timeoutMs = 240_000): Promise<void> {
    await eventually(async () => {
      const rows = await q<{ n: string }>(`select count(*) as n from upload_batches where id = any($1) and status not in ('queued', 'processing')`, [ids]);
      return Number(rows[0]!.n) === ids.length;
    }, { timeoutMs, intervalMs: 500 });
  }

  /** Per book of these batches: pages stored, distinct page numbers, page_count, status; and completed conversion runs. */
  async function conversionCounts(batchIds: string[]) {
    const books = await q<{ batch_id: string; random_id: string; page_count: number; page_images_status: string; pages: string; distinct_pages: string; status: string }>(
      `select b.batch_id, b.random_id, b.page_count, b.page_images_status, u.status,
              (select count(*) from book_pages p where p.book_id = b.id) as pages,
              (select count(distinct number) from book_pages p where p.book_id = b.id) as distinct_pages
         from books b join upload_batches u on u.id = b.batch_id where b.batch_id = any($1)`,
      [batchIds],
    );
    const runs = await q<{ batch_id: string; n: string }>(
      `select data->>'batchId' as batch_id, count(*) as n from pgboss.job
        where name = 'books.convert' and state = 'completed' and output->>'outcome' = 'completed' and data->>'batchId' = any($1)
        group by 1`,
      [batchIds],
    );
    const events = await q<{ book_id: string; n: string }>(
      `select payload->>'book_id' as book_id, count(*) as n from domain_events
        where type = 'flipbook.updated' and payload->>'page_images_status' = 'ready' group by 1`,
    );
    return { books, runs: new Map(runs.map((r) => [r.batch_id, Number(r.n)])), readyEvents: new Map(events.map((e) => [e.book_id, Number(e.n)])) };
  }

  before(async () => {
    cluster = await startCluster({ apis: 2, workers: 2, redis: true, env: { CONVERSION_THREADS: '1', PAGE_WIDTHS: '320' } });
    sql = new pg.Client({ connectionString: cluster.databaseUrl });
    await sql.connect();
    const ws = cluster.cli(['workspaces', 'create', '--name', 'Scale', '--plan', 'company']) as { id: number };
    workspaceId = ws.id;
    key = (cluster.cli(['keys', 'create', '--workspace', String(ws.id)]) as { key: string }).key;
    figure(`cluster: ${cluster.apis.length} API + ${cluster.workers.length} worker processes, proxy ${cluster.proxy.url}, S3 ${cluster.s3.endpoint}, logs ${cluster.logDir}`);
  });

  after(async () => {
    await sql?.end().catch(() => undefined);
    await cluster?.stop();
  });

  it('converts 50 uploads spread over both API processes exactly once each', async () => {
    const pdfs = await Promise.all([2, 3].map((pages) => makePdf({ pages })));
    const before = [...cluster.proxy.answered];
    const accepted: string[] = [];
    for (let i = 0; i < 50; i += 5) {
      const answers = await Promise.all(Array.from({ length: 5 }, (_, j) => upload(proxy(), key, pdfs[(i + j) % 2]!, `book-${i + j}.pdf`)));
      for (const res of answers) {
        assert.equal(res.status, 202, res.text);
        accepted.push(res.body.data.batch_id);
      }
    }
    const perApi = cluster.proxy.answered.map((n, i) => n - (before[i] ?? 0));
    await waitForBatches(accepted);
    const { books, runs, readyEvents } = await conversionCounts(accepted);
    const ready = books.filter((b) => b.status === 'completed' && b.page_images_status === 'ready' && Number(b.pages) === b.page_count && Number(b.distinct_pages) === b.page_count);
    const once = accepted.filter((id) => runs.get(id) === 1);
    const oneEvent = books.filter((b) => readyEvents.get(b.random_id) === 1);
    figure(`work once: ${accepted.length} uploads accepted (${perApi.join(' + ')} per API process), ${ready.length} books ready with every page stored once, ${once.length} converted by exactly one completed run, ${oneEvent.length} with one "ready" event`);
    assert.equal(books.length, 50);
    assert.equal(ready.length, 50);
    assert.equal(once.length, 50);
    assert.equal(oneEvent.length, 50);
    assert.ok(perApi.every((n) => n > 0), 'both API processes took uploads');
  });

  it('runs bulk settings batches, scheduled publications and expiries once', async () => {
    const books = (await call(proxy(), 'GET', '/v1/books?limit=30', key)).body.data as { random_id: string }[];
    const bulkIds = books.slice(0, 10).map((b) => b.random_id);
    const summary = await call(proxy(), 'POST', '/v1/books/bulk-settings/summary', key, { book_ids: bulkIds });
    assert.equal(summary.status, 200, summary.text);
    const bulk = await call(proxy(), 'POST', '/v1/books/bulk-settings/batches', key, {
      books: summary.body.data.books.map((b: { id: string; settings_revision: string }) => ({ id: b.id, settings_revision: b.settings_revision })),
      settings: { description: 'Bulk once' },
    });
    assert.equal(bulk.status, 202, bulk.text);

    // A few seconds ahead of each request (a loaded machine may take a while per request).
    const soon = () => new Date(Date.now() + 8000).toISOString();
    const scheduled = books.slice(10, 20).map((b) => b.random_id);
    const expiring = books.slice(20, 30).map((b) => b.random_id);
    for (const id of scheduled) assert.equal((await call(proxy(), 'PUT', `/v1/books/${id}`, key, { status: 'schedule', published_date: soon() })).status, 200);
    for (const id of expiring) assert.equal((await call(proxy(), 'PUT', `/v1/books/${id}`, key, { status: 'publish', expires_at: soon() })).status, 200);

    const done = await eventually(async () => {
      const res = await call(proxy(), 'GET', `/v1/books/bulk-settings/batches/${bulk.body.data.id}`, key);
      return res.body.data.status === 'completed' && res.body.data.finished_at ? res.body.data : null;
    }, { timeoutMs: 60_000, intervalMs: 250 });
    const statusEvents = async (ids: string[], reason: string | null) => {
      const rows = await q<{ book_id: string; n: string }>(
        `select payload->>'book_id' as book_id, count(*) as n from domain_events
          where type = 'flipbook.updated' and payload->'fields' = '["status"]'::jsonb and payload->>'book_id' = any($1)
            and ($2::text is null and payload->>'reason' is null or payload->>'reason' = $2) group by 1`,
        [ids, reason],
      );
      return rows;
    };
    await eventually(async () => (await statusEvents(scheduled, null)).length === 10 && (await statusEvents(expiring, 'expired')).length === 10, { timeoutMs: 60_000, intervalMs: 500 });
    // Give a duplicate run the chance to show up before counting: both workers poll every 0.5 s.
    await new Promise((r) => setTimeout(r, 3000));
    const bulkEvents = await q<{ book_id: string; n: string }>(
      `select payload->>'book_id' as book_id, count(*) as n from domain_events where type = 'flipbook.updated' and payload->>'book_id' = any($1) and payload->'fields' ? 'description' group by 1`,
      [bulkIds],
    );
    const bulkJobs = await q<{ n: string }>(`select count(*) as n from pgboss.job where name like 'books.bulk%' and state = 'completed' and data::text like $1`, [`%${bulk.body.data.id}%`]);
    const published = await statusEvents(scheduled, null);
    const expired = await statusEvents(expiring, 'expired');
    figure(`once: bulk batch ${done.progress.succeeded}/${bulkIds.length} succeeded, ${bulkEvents.filter((e) => e.n === '1').length} books with one bulk event, ${bulkJobs[0]!.n} completed bulk job; ${published.filter((e) => e.n === '1').length}/10 scheduled publications and ${expired.filter((e) => e.n === '1').length}/10 expiries with exactly one event`);
    assert.equal(done.progress.succeeded, 10);
    assert.equal(bulkEvents.length, 10);
    assert.ok(bulkEvents.every((e) => e.n === '1'));
    assert.equal(Number(bulkJobs[0]!.n), 1);
    assert.ok(published.every((e) => e.n === '1') && published.length === 10);
    assert.ok(expired.every((e) => e.n === '1') && expired.length === 10);
  });

  it('finishes a conversion whose worker is killed (kill -9) on the other worker, once', async () => {
    const res = await upload(proxy(), key, await makePdf({ pages: 60 }), 'long.pdf');
    assert.equal(res.status, 202, res.text);
    const batchId = res.body.data.batch_id as string;
    const lease = await eventually(async () => {
      const rows = await q<{ owner: string; pages: number }>(
        `select l.owner, u.completed_pages as pages from conversion_leases l join upload_batches u on u.id = l.batch_id where l.batch_id = $1 and l.state = 'running'`,
        [batchId],
      );
      return rows[0] && rows[0].pages >= 3 ? rows[0] : null;
    }, { timeoutMs: 120_000, intervalMs: 100 });
    const pid = Number(lease.owner.split(':').pop());
    const victim = cluster.workers.find((w) => w.child.pid === pid);
    assert.ok(victim, `the lease owner ${lease.owner} is one of the workers`);
    const killedAt = Date.now();
    victim.child.kill('SIGKILL');
    await victim.exited;
    const takenOver = await eventually(async () => {
      const rows = await q<{ runs: number; owner: string }>(`select runs, owner from conversion_leases where batch_id = $1 and state = 'running'`, [batchId]);
      return rows[0] && rows[0].runs >= 2 ? rows[0] : null;
    }, { timeoutMs: 120_000, intervalMs: 100 });
    const pickedUpMs = Date.now() - killedAt;
    await waitForBatches([batchId]);
    const finishedMs = Date.now() - killedAt;
    cluster.workers.splice(cluster.workers.indexOf(victim), 1, await cluster.start('worker', 'worker-1b'));
    const { books, runs } = await conversionCounts([batchId]);
    const book = books[0]!;
    figure(`kill -9 worker: killed at page ${lease.pages}/60; taken over by ${takenOver.owner === lease.owner ? 'the same process?!' : 'the other worker'} after ${(pickedUpMs / 1000).toFixed(1)} s (lease ${cluster.env.CONVERSION_LEASE_SECONDS ?? 20} s), finished after ${(finishedMs / 1000).toFixed(1)} s; ${book.pages} pages stored for page_count ${book.page_count} (${book.distinct_pages} distinct), ${runs.get(batchId) ?? 0} completed run`);
    assert.notEqual(takenOver.owner, lease.owner);
    assert.ok(pickedUpMs < 120_000);
    assert.equal(book.status, 'completed');
    assert.equal(book.page_count, 60);
    assert.equal(Number(book.pages), 60);
    assert.equal(Number(book.distinct_pages), 60);
    assert.equal(runs.get(batchId), 1);
    // The stale pg-boss job of the dead worker stays active until its expiry; its retry then finds the batch done.
  });

  it('answers an error or a complete 202 when an API process is killed mid-upload; a retry with the same Idempotency-Key makes one book', async () => {
    const target = cluster.apis[0]!;
    const pdf = await makePdf({ pages: 2 });
    const padded = Buffer.concat([pdf, Buffer.alloc(4 * 1024 * 1024, 0x20)]); // a PDF may carry trailing whitespace
    const idempotencyKey = `upload-${randomUUID()}`;
    const countBooks = async () => Number((await q<{ n: string }>('select count(*) as n from books where workspace_id = $1', [workspaceId]))[0]!.n);
    const booksBefore = await countBooks();

    // A raw multipart request, sent slowly, so the process dies with half the body received.
    const boundary = `----scale${randomUUID()}`;
    // Published, like every other book of this workspace (the restart test reads the newest book's reader).
    const head = Buffer.from(
      `--${boundary}\r\ncontent-disposition: form-data; name="status"\r\n\r\npublish\r\n` +
      `--${boundary}\r\ncontent-disposition: form-data; name="files[]"; filename="cut.pdf"\r\ncontent-type: application/pdf\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const body = Buffer.concat([head, padded, tail]);
    const port = Number(new URL(target.url!).port);
    const outcome = await new Promise<string>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write(`POST /v1/books HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\nidempotency-key: ${idempotencyKey}\r\ncontent-type: multipart/form-data; boundary=${boundary}\r\ncontent-length: ${body.length}\r\n\r\n`);
        socket.write(body.subarray(0, body.length >> 1), () => setTimeout(() => target.child.kill('SIGKILL'), 200));
      });
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString()));
      socket.on('error', () => resolve(answer ? answer.split('\r\n')[0]! : 'connection error'));
      socket.on('close', () => resolve(answer ? answer.split('\r\n')[0]! : 'connection closed without an answer'));
    });
    await target.exited;
    const booksAfterKill = await countBooks();
    const halfMade = await q<{ n: string }>(`select count(*) as n from upload_batches u where u.workspace_id = $1 and not exists (select 1 from books b where b.batch_id = u.id)`, [workspaceId]);

    cluster.apis.splice(0, 1, await cluster.start('api', 'api-1b'));
    // The dead request's lock is no longer renewed: a retry gets 409 with Retry-After until it is taken for abandoned.
    const other = cluster.apis[1]!;
    const retryStart = Date.now();
    let retry: Res;
    let inProgress = 0;
    // A client's retry sends the same request again: the same bytes (so the same fingerprint), the same key.
    const resend = async (base: string): Promise<Res> => {
      const response = await fetch(`${base}/v1/books`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': idempotencyKey, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: new Uint8Array(body),
      });
      const text = await response.text();
      return { status: response.status, body: JSON.parse(text), text, headers: response.headers };
    };
    let refusedEarly = 0;
    for (;;) {
      // While the key is in progress the answer is 409 with Retry-After, sent before the 4 MB body is read; the
      // service then closes the connection (it never reads a large body it has refused), so a client may see the
      // 409 or only a broken pipe. Either way it retries after a moment, as any upload client would.
      const attempt = await resend(other.url!).catch(() => null);
      if (attempt && attempt.status !== 409) {
        retry = attempt;
        break;
      }
      if (attempt) inProgress++;
      else refusedEarly++;
      assert.ok(Date.now() - retryStart < 60_000, 'the abandoned key was taken over within a minute');
      await new Promise((r) => setTimeout(r, Number(attempt?.headers.get('retry-after') ?? 1) * 1000));
    }
    const retryMs = Date.now() - retryStart;
    const again = await resend(other.url!);
    await waitForBatches([retry.body.data.batch_id]);
    const booksAfterRetry = await countBooks();
    figure(`kill -9 API mid-upload: client saw "${outcome}"; books ${booksBefore} → ${booksAfterKill} after the kill, ${halfMade[0]!.n} batches without a book; retry ${retry.status} after ${inProgress} × 409 in progress and ${refusedEarly} connections closed early (${(retryMs / 1000).toFixed(1)} s), second retry ${again.status} (replay ${again.headers.get('x-idempotent-replay')}), same batch ${retry.body.data.batch_id === again.body.data.batch_id}; books ${booksAfterRetry} (+${booksAfterRetry - booksBefore})`);
    assert.ok(/^HTTP\/1\.1 202/.test(outcome) || !outcome.startsWith('HTTP'), `an error or a complete 202, not ${outcome}`);
    if (!outcome.startsWith('HTTP/1.1 202')) assert.equal(booksAfterKill, booksBefore);
    assert.equal(Number(halfMade[0]!.n), 0);
    assert.equal(retry.status, 202, retry.text);
    assert.equal(again.status, 202);
    assert.equal(again.body.data.batch_id, retry.body.data.batch_id);
    assert.equal(booksAfterRetry, booksBefore + 1);
  });

  async function exactLimit(base: () => string, label: string): Promise<void> {
    const ws = cluster.cli(['workspaces', 'create', '--name', `Limits ${label}`, '--plan', 'company']) as { id: number };
    const limitKey = (cluster.cli(['keys', 'create', '--workspace', String(ws.id)]) as { key: string }).key;
    // The limits count fixed one-minute windows: 101 requests must fall in one.
    await roomInRateLimitWindow();
    const answers = await Promise.all(Array.from({ length: 101 }, () => call(base(), 'GET', '/v1/me', limitKey)));
    const ok = answers.filter((a) => a.status === 200).length;
    const limited = answers.filter((a) => a.status === 429).length;
    figure(`rate limit (${label}): 101 concurrent GET /v1/me through the proxy (2 API processes): ${ok} × 200, ${limited} × 429`);
    assert.equal(ok, 100);
    assert.equal(limited, 1);
  }

  it('holds the per-endpoint limit exactly across both API processes through Redis', async () => {
    await exactLimit(proxy, 'Redis');
  });

  it('holds it exactly without Redis, through PostgreSQL', async () => {
    const plain = await Promise.all([cluster.start('api', 'api-pg-1', { REDIS_URL: '' }), cluster.start('api', 'api-pg-2', { REDIS_URL: '' })]);
    let turn = 0;
    try {
      await exactLimit(() => plain[turn++ % 2]!.url!, 'PostgreSQL, no Redis');
    } finally {
      for (const p of plain) p.child.kill('SIGTERM');
      await Promise.all(plain.map((p) => p.exited));
    }
  });

  it('refuses a key revoked through one process in the other at once', async () => {
    const created = cluster.cli(['keys', 'create', '--workspace', String(workspaceId), '--scopes', 'books:read']) as { id: number; key: string };
    const [a, b] = cluster.apis.map((p) => p.url!) as [string, string];
    assert.equal((await call(a, 'GET', '/v1/me', created.key)).status, 200, 'cached in the first process');
    assert.equal((await call(b, 'GET', '/v1/me', created.key)).status, 200, 'cached in the second process');
    cluster.cli(['keys', 'revoke', String(created.id)]);
    const first = await Promise.all([call(a, 'GET', '/v1/me', created.key), call(b, 'GET', '/v1/me', created.key)]);
    figure(`revocation: first request after the revoke returned: ${first.map((r) => r.status).join(' and ')} from the two API processes`);
    assert.deepEqual(first.map((r) => r.status), [401, 401]);
  });

  it('keeps page images and originals in the bucket and serves them from either API process', async () => {
    const [book] = (await call(proxy(), 'GET', '/v1/books?limit=1', key)).body.data as { random_id: string }[];
    const pages = await call(proxy(), 'GET', `/v1/books/${book!.random_id}/pages`, key);
    assert.equal(pages.status, 200, pages.text);
    const s3 = new S3Client({ region: 'us-east-1', endpoint: cluster.s3.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: cluster.s3.bucket, Prefix: `books/${book!.random_id}/` }));
    const keys = (listed.Contents ?? []).map((o) => o.Key!);
    const imageUrls: string[] = pages.body.data.flatMap((p: { images: { url: string }[] }) => p.images.map((i) => i.url));
    let served = 0;
    for (const url of imageUrls) {
      const asset = new URL(url).pathname;
      const answers = await Promise.all(cluster.apis.map((p) => fetch(p.url! + asset)));
      const bodies = await Promise.all(answers.map(async (r) => Buffer.from(await r.arrayBuffer())));
      if (answers.every((r) => r.status === 200 && r.headers.get('content-type') === 'image/webp') && bodies[0]!.equals(bodies[1]!)) served++;
    }
    const original = keys.filter((k) => !k.endsWith('.webp'));
    const localFileDirs = readdirSync(cluster.logDir).filter((d) => d.startsWith('data-') && existsSync(path.join(cluster.logDir, d, 'files')));
    figure(`storage: ${keys.length} objects in the bucket for one book (${keys.length - original.length} page images, ${original.length} original), ${served}/${imageUrls.length} page images served identically by both API processes; processes with a local files directory: ${localFileDirs.length}`);
    assert.ok(imageUrls.length > 0);
    assert.equal(served, imageUrls.length);
    assert.ok(imageUrls.every((url) => keys.some((k) => new URL(url).pathname.endsWith(k))), 'every page image is an object of the bucket');
    assert.ok(original.length >= 1, 'the original is in the bucket');
    assert.equal(localFileDirs.length, 0, 'no process kept files on its disk');
  });

  it('keeps logos and the reader\'s PDF downloads in the bucket and serves them from either API process', async () => {
    const [a, b] = cluster.apis.map((p) => p.url!) as [string, string];
    const s3 = new S3Client({ region: 'us-east-1', endpoint: cluster.s3.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    const object = async (objectKey: string) => Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: cluster.s3.bucket, Key: objectKey }))).Body!.transformToByteArray());
    const fetchBoth = async (route: string) => Promise.all([a, b].map(async (base) => {
      const response = await fetch(base + route);
      return { status: response.status, type: response.headers.get('content-type'), body: Buffer.from(await response.arrayBuffer()) };
    }));

    // The logo: written through one API process, an object of the bucket, served the same by both.
    const form = new FormData();
    form.append('company_name', 'Scale Co');
    form.append('file', new Blob([new Uint8Array(await sharp({ create: { width: 64, height: 32, channels: 3, background: '#c33' } }).png().toBuffer())]), 'logo.png');
    const created = await fetch(`${a}/v1/brand`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    const brand = (await created.json()) as { data: { brand: { logo: string } } };
    assert.equal(created.status, 201, JSON.stringify(brand));
    const logoPath = new URL(brand.data.brand.logo).pathname;
    const logoKeys = ((await s3.send(new ListObjectsV2Command({ Bucket: cluster.s3.bucket, Prefix: `brands/${workspaceId}/` }))).Contents ?? []).map((o) => o.Key!);
    const logoKey = logoKeys.find((k) => logoPath.endsWith(k));
    assert.ok(logoKey, `the logo ${logoPath} is an object of the bucket (${logoKeys.join(', ')})`);
    const logoStored = await object(logoKey);
    const logos = await fetchBoth(logoPath);
    const logosServed = logos.filter((r) => r.status === 200 && r.type === 'image/webp' && r.body.equals(logoStored)).length;

    // The download: a book made downloadable through the other process; its PDF is the bucket's object, served by both.
    const [book] = (await call(proxy(), 'GET', '/v1/books?limit=1', key)).body.data as { random_id: string }[];
    const updated = await call(b, 'PUT', `/v1/books/${book!.random_id}`, key, { status: 'publish', downloadable_pdf: true });
    assert.equal(updated.status, 200, updated.text);
    const [row] = await q<{ pdf_key: string }>('select pdf_key from books where random_id = $1', [book!.random_id]);
    assert.ok(row?.pdf_key, 'the book has a PDF');
    const pdfStored = await object(row.pdf_key);
    const downloads = await fetchBoth(`/read/${book!.random_id}/download`);
    const downloadsServed = downloads.filter((r) => r.status === 200 && r.type === 'application/pdf' && r.body.equals(pdfStored)).length;
    figure(`storage: logo ${logoKey} (${logoStored.length} bytes) served byte-identical by ${logosServed}/2 API processes; download ${row.pdf_key} (${pdfStored.length} bytes) served byte-identical by ${downloadsServed}/2 API processes`);
    assert.equal(logosServed, 2, `logo answers: ${logos.map((r) => `${r.status} ${r.type}`).join(', ')}`);
    assert.equal(downloadsServed, 2, `download answers: ${downloads.map((r) => `${r.status} ${r.type}`).join(', ')}`);
  });

  it('loses no accepted upload and no acknowledged reader event when every process restarts (SIGTERM) mid-load', async () => {
    const [book] = (await call(proxy(), 'GET', '/v1/books?limit=1', key)).body.data as { random_id: string }[];
    const pdf = await makePdf({ pages: 2 });
    const acceptedUploads: string[] = [];
    const ackedEvents: { session: string; stored: number }[] = [];
    let uploadErrors = 0;
    let eventErrors = 0;
    let loading = true;
    const uploads = (async () => {
      for (let i = 0; loading; i++) {
        try {
          const res = await upload(proxy(), key, pdf, `restart-${i}.pdf`);
          if (res.status === 202) acceptedUploads.push(res.body.data.batch_id);
          else uploadErrors++;
        } catch {
          uploadErrors++;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const events = (async () => {
      for (let i = 0; loading; i++) {
        const session = randomUUID();
        try {
          const res = await fetch(`${proxy()}/read/${book!.random_id}/events`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'user-agent': BROWSER_UA, 'x-forwarded-for': `198.51.100.${(i % 200) + 1}` },
            body: JSON.stringify({ session_id: session, active_ms: 1000, events: [{ seq: 0, type: 'session_started' }, { seq: 1, type: 'page_segment_completed', page: 1, active_ms: 1000 }] }),
          });
          const json = (await response(res)) as { stored?: number } | null;
          if (res.status === 200 && json?.stored) ackedEvents.push({ session, stored: json.stored });
          else eventErrors++;
        } catch {
          eventErrors++;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    async function response(res: Response): Promise<unknown> {
      try {
        return await res.json();
      } catch {
        return null;
      }
    }

    let codes: (number | null)[];
    try {
      await eventually(async () => acceptedUploads.length >= 3 && ackedEvents.length >= 20, { timeoutMs: 60_000 });
      const all: FlipbookProcess[] = [...cluster.apis, ...cluster.workers];
      for (const p of all) p.child.kill('SIGTERM');
      codes = await Promise.all(all.map((p) => p.exited));
      const restarted = await Promise.all(all.map((p) => cluster.start(p.role, `${p.name}-r`)));
      cluster.apis.splice(0, cluster.apis.length, ...restarted.filter((p) => p.role === 'api'));
      cluster.workers.splice(0, cluster.workers.length, ...restarted.filter((p) => p.role === 'worker'));
      const acceptedAtRestart = acceptedUploads.length;
      await eventually(async () => acceptedUploads.length >= acceptedAtRestart + 3, { timeoutMs: 60_000 });
    } finally {
      loading = false;
      await Promise.all([uploads, events]);
    }

    await waitForBatches(acceptedUploads);
    const { books } = await conversionCounts(acceptedUploads);
    const converted = books.filter((b) => b.status === 'completed' && Number(b.pages) === b.page_count && b.page_count === 2);
    const sessions = ackedEvents.map((e) => e.session);
    const stored = await q<{ session_id: string; n: string }>(
      `select v.session_id::text as session_id, count(i.id) as n from view_events v left join interaction_events i on i.view_event_id = v.id where v.session_id::text = any($1) group by 1`,
      [sessions],
    );
    const storedBySession = new Map(stored.map((s) => [s.session_id, Number(s.n)]));
    const complete = ackedEvents.filter((e) => (storedBySession.get(e.session) ?? 0) >= e.stored);
    figure(`restart (SIGTERM to all 4 processes mid-load, exit codes ${codes.join(',')}): ${acceptedUploads.length} uploads accepted, ${converted.length} converted, ${uploadErrors} refused while down; ${ackedEvents.length} reader event batches acknowledged, ${complete.length} stored whole, ${eventErrors} refused while down`);
    assert.equal(converted.length, acceptedUploads.length);
    assert.equal(complete.length, ackedEvents.length);
  });
});
