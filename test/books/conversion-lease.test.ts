/**
 * Conversion liveness and fencing (conversion-lease.ts) on the real database:
 * a second run cannot take a live lease; a lease that stops being renewed is
 * re-queued by the sweeper; once a newer run holds the batch, every write of
 * the old one is refused in its own transaction. The multi-process version
 * (kill -9 of a worker mid-conversion) is test/scale/scale.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import pino from 'pino';
import { bookPages, books } from '../../src/modules/books/books.tables.ts';
import { acquireConversionLease, isLeaseLost, sweepExpiredConversionLeases } from '../../src/modules/books/conversion-lease.ts';
import { conversionLeases } from '../../src/modules/books/conversion-lease.tables.ts';
import { makePdf } from '../documents.ts';
import { startService, uploadFile, waitForBatch, type TestService } from '../helpers.ts';

const log = pino({ level: 'silent' });

describe('conversion lease', () => {
  let svc: TestService;
  let key: string;
  before(async () => {
    // No worker: the test plays the runs itself.
    svc = await startService({ worker: false });
    key = (await svc.workspace()).key;
  });
  after(() => svc.stop());

  async function queuedBatch(): Promise<{ batchId: string; bookId: number }> {
    const res = await uploadFile(svc, key, await makePdf({ pages: 2 }), 'lease.pdf');
    assert.equal(res.status, 202, res.text);
    const db = svc.runtime.database.db;
    const [book] = await db.select({ id: books.id }).from(books).where(eq(books.batchId, res.body.data.batch_id));
    return { batchId: res.body.data.batch_id, bookId: book!.id };
  }

  it('lets one run hold a batch, re-queues it when the lease runs out, and fences the old run', async () => {
    const db = svc.runtime.database.db;
    const { batchId, bookId } = await queuedBatch();
    const first = await acquireConversionLease(db, batchId, { ttlMs: 60_000, log });
    assert.ok(first);
    assert.equal(await acquireConversionLease(db, batchId, { ttlMs: 60_000, log }), null, 'a live lease is not taken');
    first.stop(); // the first run goes silent (as if killed)

    await first.write((tx) => tx.insert(bookPages).values({ bookId, number: 1, widthPt: 100, heightPt: 100, images: [], text: [], links: [], plainText: '' }));
    assert.deepEqual(await sweepExpiredConversionLeases(db, svc.runtime.queue, 60_000), [], 'a live lease is not swept');

    await db.update(conversionLeases).set({ expiresAt: sql`now() - interval '1 second'` }).where(eq(conversionLeases.batchId, batchId));
    assert.deepEqual(await sweepExpiredConversionLeases(db, svc.runtime.queue, 60_000), [batchId]);
    assert.deepEqual(await sweepExpiredConversionLeases(db, svc.runtime.queue, 60_000), [], 'swept once');
    const [row] = await db.select().from(conversionLeases).where(eq(conversionLeases.batchId, batchId));
    assert.equal(row!.state, 'requeued');
    assert.equal(row!.requeues, 1);

    const second = await acquireConversionLease(db, batchId, { ttlMs: 60_000, log });
    assert.ok(second, 'the re-queued batch is taken by the next run');
    await assert.rejects(
      first.write((tx) => tx.insert(bookPages).values({ bookId, number: 2, widthPt: 100, heightPt: 100, images: [], text: [], links: [], plainText: '' })),
      (error) => isLeaseLost(error),
    );
    assert.ok(first.signal.aborted, 'the old run is told to stop');
    const pages = await db.select({ number: bookPages.number }).from(bookPages).where(eq(bookPages.bookId, bookId));
    assert.deepEqual(pages.map((p) => p.number), [1], 'the fenced write left nothing');

    await second.write((tx) => second.finish(tx));
    assert.equal((await db.select().from(conversionLeases).where(eq(conversionLeases.batchId, batchId))).length, 0);
  });

  it('converts with a worker and leaves no lease behind', async () => {
    const worker = await startService({ env: { CONVERSION_LEASE_SECONDS: 2 } });
    try {
      const wkey = (await worker.workspace()).key;
      const res = await uploadFile(worker, wkey, await makePdf({ pages: 3 }), 'leased.pdf');
      assert.equal(res.status, 202, res.text);
      const batch = await waitForBatch(worker, wkey, res.body.data.batch_id);
      assert.equal(batch.status, 'completed');
      assert.equal(batch.books[0].page_count, 3);
      assert.equal((await worker.runtime.database.db.select().from(conversionLeases)).length, 0);
    } finally {
      await worker.stop();
    }
  });
});
