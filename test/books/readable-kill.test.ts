/**
 * A worker that stops during the background phase of a readable book loses
 * nothing: the next run (after the conversion lease runs out, as the sweeper
 * would hand it over) keeps the rendition and the pages already stored, draws
 * only the rest, and no image is stored twice (puts counted per key across
 * both runs). On PostgreSQL the first run is a child process killed with
 * SIGKILL; on both databases, a run frozen in the middle of a store.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { and, eq, sql } from 'drizzle-orm';
import pino from 'pino';
import { bookPages, books, uploadBatches } from '../../src/modules/books/books.tables.ts';
import { conversionLeases } from '../../src/modules/books/conversion-lease.tables.ts';
import { convertBook, type ConvertBookDeps } from '../../src/modules/books/convert-book.job.ts';
import type { Storage } from '../../src/platform/storage/storage.ts';
import { makePdf } from '../documents.ts';
import { startService, uploadFile, usingPostgres, type TestService } from '../helpers.ts';

const log = pino({ level: 'silent' });
const ctx = () => ({ jobId: 'test', signal: new AbortController().signal, log, retryCount: 0 });

describe('a worker stopped while a readable book is drawn in the background', () => {
  let svc: TestService;
  let key: string;
  before(async () => {
    // No worker: the test plays the runs.
    svc = await startService({ worker: false });
    key = (await svc.workspace()).key;
  });
  after(() => svc.stop());

  const deps = (): Omit<ConvertBookDeps, 'db' | 'storage'> => ({
    widths: svc.runtime.config.pageWidths,
    onDemandWidths: svc.runtime.config.onDemandWidths,
    backgroundConcurrency: 1,
    leaseMs: 60_000,
  });

  async function queued(pages: number) {
    const res = await uploadFile(svc, key, await makePdf({ pages }), 'Killed.pdf', { status: 'publish' });
    assert.equal(res.status, 202, res.text);
    const batchId = res.body.data.batch_id as string;
    const [book] = await svc.runtime.database.db.select().from(books).where(eq(books.batchId, batchId));
    return { batchId, bookId: book!.id };
  }

  async function progress(batchId: string) {
    const [batch] = await svc.runtime.database.db.select().from(uploadBatches).where(eq(uploadBatches.id, batchId));
    return batch!;
  }

  /** The next run takes over (the dead run's lease has run out), counting its puts; then everything is checked. */
  async function finishAndCheck(batchId: string, bookId: number, firstPuts: Map<string, number>) {
    const db = svc.runtime.database.db;
    const [before] = await db.select({ renditionId: books.renditionId }).from(books).where(eq(books.id, bookId));
    const drawnBefore = (await db.select({ number: bookPages.number }).from(bookPages).where(and(eq(bookPages.bookId, bookId), eq(bookPages.drawn, true)))).length;
    assert.ok(drawnBefore >= 4 && drawnBefore < 40, `stopped part way (${drawnBefore} pages drawn)`);
    await db.update(conversionLeases).set({ expiresAt: sql`now() - interval '1 second'` }).where(eq(conversionLeases.batchId, batchId));

    const puts = new Map(firstPuts);
    const storage = svc.runtime.storage;
    const counting: Storage = Object.create(storage) as Storage;
    counting.put = async (k, body, options) => {
      const stored = await storage.put(k, body, options);
      puts.set(k, (puts.get(k) ?? 0) + 1);
      return stored;
    };
    const outcome = await convertBook({ ...deps(), db, storage: counting }, batchId, ctx());
    assert.equal(outcome.outcome, 'completed');

    const batch = await progress(batchId);
    assert.equal(batch.status, 'completed');
    assert.equal(batch.completedPages, 40, 'every page counted once');
    const [afterRun] = await db.select({ renditionId: books.renditionId, status: books.pageImagesStatus }).from(books).where(eq(books.id, bookId));
    assert.equal(afterRun!.renditionId, before!.renditionId, 'the rendition is kept');
    assert.equal(afterRun!.status, 'ready');
    const rows = await db.select().from(bookPages).where(eq(bookPages.bookId, bookId));
    assert.equal(rows.length, 40);
    for (const row of rows) {
      assert.ok(row.drawn, `page ${row.number} drawn`);
      for (const image of row.images.filter((i) => !i.onDemand)) {
        assert.ok(await storage.stat(image.key), `${image.key} is stored`);
        assert.equal(puts.get(image.key), 1, `${image.key} stored once`);
      }
    }
    assert.deepEqual([...puts].filter(([, n]) => n > 1), [], 'no image stored twice');
    const secondRun = [...puts.keys()].filter((k) => !firstPuts.has(k)).length;
    // Two widths a page. Pages are stored one at a time, so at most one was cut short: between its two stores (the
    // next run finds the first in storage), or after both and before its row said drawn (it finds both: CI saw 58 of 60).
    const missing = (40 - drawnBefore) * 2;
    assert.ok(secondRun <= missing && secondRun >= missing - 2, `the next run stored only what was missing (${secondRun} of ${missing})`);
  }

  it('SIGKILL of the worker process: another run finishes the book', { skip: usingPostgres ? false : 'needs a database two processes share (PostgreSQL)' }, async () => {
    const { batchId, bookId } = await queued(40);
    const config = svc.runtime.config;
    assert.equal(config.storage.kind, 'local');
    const root = (config.storage as { root: string }).root;
    const child = spawn(process.execPath, [path.join(import.meta.dirname, 'convert-run.child.ts'), svc.runtime.database.url!, root, batchId, JSON.stringify(deps())], { stdio: ['ignore', 'pipe', 'inherit'] });
    const firstPuts = new Map<string, number>();
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const lines = out.split('\n');
      out = lines.pop()!;
      for (const line of lines) if (line.startsWith('put ')) firstPuts.set(line.slice(4), (firstPuts.get(line.slice(4)) ?? 0) + 1);
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    const end = Date.now() + 120_000;
    for (;;) {
      const batch = await progress(batchId);
      if (batch.readableAt && batch.completedPages >= 10) break;
      assert.ok(Date.now() < end && child.exitCode === null, `the child run reached the background phase (${batch.status}, ${batch.completedPages} pages)`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    child.kill('SIGKILL');
    await exited;
    await finishAndCheck(batchId, bookId, firstPuts);
  });

  it('a run frozen in the middle of a store: the next run finishes the book, the frozen store never lands twice', async () => {
    const { batchId, bookId } = await queued(40);
    const db = svc.runtime.database.db;
    const storage = svc.runtime.storage;
    const firstPuts = new Map<string, number>();
    let frozen = false;
    const freezing: Storage = Object.create(storage) as Storage;
    freezing.put = async (k, body, options) => {
      const [batch] = await db.select().from(uploadBatches).where(eq(uploadBatches.id, batchId));
      if (frozen || (batch!.readableAt && batch!.completedPages >= 10)) {
        frozen = true;
        return new Promise(() => undefined); // never: the process froze here
      }
      const stored = await storage.put(k, body, options);
      firstPuts.set(k, (firstPuts.get(k) ?? 0) + 1);
      return stored;
    };
    void convertBook({ ...deps(), db, storage: freezing }, batchId, ctx());
    const end = Date.now() + 120_000;
    while (!frozen) {
      assert.ok(Date.now() < end, 'the first run reached the background phase');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await finishAndCheck(batchId, bookId, firstPuts);
  });
});
