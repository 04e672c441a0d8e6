/**
 * A server without poppler-utils (issue 32): what pdf.js cannot draw is said
 * on the page, the batch and in the log, and an on-demand rendition missing
 * content is answered but not stored, so it is drawn again once poppler is
 * there. The renderers are started with a PATH where no pdftoppm is found.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { bookPages, books } from '../../src/modules/books/books.tables.ts';
import { eq } from 'drizzle-orm';
import { startService, uploadFile, waitForBatch, type TestService } from '../helpers.ts';
import { FONT_SKIP, noCmapTablePdf } from './unseen-documents.ts';

describe('conversion without poppler-utils', { skip: FONT_SKIP }, () => {
  let svc: TestService;
  let key: string;
  let emptyPath: string;
  const originalPath = process.env.PATH;
  const logLines: string[] = [];
  before(async () => {
    // Renderers are forked with this process's environment: none of them will find pdftoppm.
    emptyPath = await mkdtemp(path.join(os.tmpdir(), 'flipbook-no-poppler-'));
    process.env.PATH = emptyPath;
    const logStream = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    svc = await startService({ env: { PAGE_WIDTHS: '320,1024,2048' }, logStream });
    key = (await svc.workspace()).key;
  });
  after(async () => {
    await svc.stop();
    process.env.PATH = originalPath;
    await rm(emptyPath, { recursive: true, force: true });
  });

  it('warns font_not_drawn on the page, the batch and in the log; the 2048 px drawing is answered but not stored', async () => {
    const res = await uploadFile(svc, key, noCmapTablePdf(), 'report.pdf', { status: 'publish' });
    assert.equal(res.status, 202, res.text);
    const batch = await waitForBatch(svc, key, res.body.data.batch_id);
    assert.equal(batch.status, 'completed');
    assert.deepEqual(batch.warnings.map((w: { code: string; page: number }) => [w.code, w.page]), [['font_not_drawn', 1], ['font_not_drawn', 2]]);
    assert.match(batch.warnings[0].message, /without a character map.*poppler-utils/);
    const randomId = batch.books[0].random_id as string;
    const [page] = (await svc.request('GET', `/v1/books/${randomId}/pages`, { key })).body.data;
    assert.equal(page.warnings[0].code, 'font_not_drawn');
    assert.ok(logLines.some((line) => line.includes('conversion warning') && line.includes('font_not_drawn')), 'the log says why');

    const lazy = (page.images as { width: number; url: string }[]).find((image) => image.width === 2048)!;
    const drawn = await fetch(lazy.url);
    assert.equal(drawn.status, 200);
    const [row] = await svc.runtime.database.db.select({ images: bookPages.images }).from(bookPages).innerJoin(books, eq(books.id, bookPages.bookId)).where(eq(books.randomId, randomId)).limit(1);
    const entry = row!.images.find((image) => image.width === 2048)!;
    assert.equal(await svc.runtime.storage.get(entry.key), null, 'not stored: drawn again on the next request');
    assert.ok(logLines.some((line) => line.includes('on-demand rendition not stored')), 'the log says why');
  });
});
