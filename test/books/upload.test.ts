import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { findSoffice } from '../../src/modules/conversion/office-to-pdf.ts';
import { CORPUS_SKIP, corpus, makePdf, makePng } from '../documents.ts';
import { startService, uploadFile, waitForBatch, type TestService } from '../helpers.ts';

const sofficeSkip = (await findSoffice()) ? false : 'LibreOffice (soffice) is not installed';

describe('uploading documents', () => {
  let svc: TestService;
  let key: string;
  before(async () => {
    svc = await startService({ env: { UPLOAD_LIMIT_BYTES: 5 * 1024 * 1024 } });
    key = (await svc.workspace()).key;
  });
  after(() => svc.stop());

  async function convert(file: Buffer, filename: string, fields: Record<string, string> = {}) {
    const res = await uploadFile(svc, key, file, filename, fields);
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.data.batch_id, res.body.data.id);
    assert.equal(res.headers.get('location'), `/v1/batches/${res.body.data.id}`);
    return waitForBatch(svc, key, res.body.data.batch_id);
  }

  it('converts a PDF into pages with images, text and links', async () => {
    const batch = await convert(await makePdf({ pages: 3, links: true }), 'Quarterly report.pdf', { status: 'publish' });
    assert.equal(batch.status, 'completed', JSON.stringify(batch.error));
    assert.deepEqual(batch.progress, { total: 3, completed: 3, pending: 0, failed: 0 });
    assert.equal(batch.source_format, 'pdf');
    const book = batch.books[0];
    assert.equal(book.name, 'Quarterly report');
    assert.equal(book.status, 'publish');
    assert.equal(book.page_images_status, 'ready');
    assert.equal(book.page_count, 3);
    assert.match(book.random_id, /^[A-Za-z0-9_-]{22}$/);
    assert.match(book.preview_url, new RegExp(`/read/${book.random_id}$`));
    assert.match(book.embed_code, /<iframe[^>]+loading="lazy"[^>]+title|title="Quarterly report"/);
    assert.ok(book.thumbnail_url);
    assert.ok(!('id' in book), 'the numeric key is never published');

    const pages = await svc.request('GET', `/v1/books/${book.random_id}/pages`, { key });
    assert.equal(pages.status, 200);
    assert.equal(pages.body.data.length, 3);
    const [first, , last] = pages.body.data;
    assert.equal(first.width, 595);
    assert.equal(first.height, 842);
    assert.deepEqual(first.images.map((i: { width: number }) => i.width), [320, 1024, 2048]);
    assert.equal(first.images[2].height, Math.round((2048 * 842) / 595));
    assert.ok(first.text.some((t: { text: string }) => t.text.includes('Page 1 of 3')));
    assert.ok(last.text.some((t: { text: string }) => t.text.includes('Page 3 of 3')));
    const urls = first.links.filter((l: { url?: string }) => l.url).map((l: { url: string }) => l.url);
    assert.ok(urls.includes('https://example.com/annotated'), `annotation link missing: ${urls}`);
    assert.ok(urls.some((u: string) => u.includes('www.flipbook-test.example')), 'auto-detected URL');
    assert.ok(urls.includes('mailto:hello@flipbook-test.example'), 'auto-detected e-mail');
    assert.ok(first.links.some((l: { page?: number }) => l.page === 3), 'internal link to the last page');

    const image = await fetch(first.images[0].url);
    assert.equal(image.status, 200);
    assert.equal(image.headers.get('content-type'), 'image/webp');
    assert.match(image.headers.get('cache-control') ?? '', /immutable/);
    assert.equal((await image.arrayBuffer()).byteLength, first.images[0].bytes ?? Number(image.headers.get('content-length')));
  });

  it('leaves auto-links out when auto_links_enabled is false', async () => {
    const batch = await convert(await makePdf({ pages: 1 }), 'plain.pdf', { auto_links_enabled: 'false' });
    const book = batch.books[0];
    assert.equal(book.settings.auto_links_enabled, false);
    const pages = await svc.request('GET', `/v1/books/${book.random_id}/pages`, { key });
    assert.deepEqual(pages.body.data[0].links, []);
  });

  it('turns a PNG into a one-page book', async () => {
    const batch = await convert(await makePng(800, 600), 'photo.png');
    assert.equal(batch.status, 'completed');
    assert.equal(batch.books[0].page_count, 1);
    const pages = await svc.request('GET', `/v1/books/${batch.books[0].random_id}/pages`, { key });
    const [small] = pages.body.data[0].images;
    assert.equal(small.width, 320);
    assert.equal(small.height, 240);
  });

  it('refuses what is not a document, an empty file, a missing file, a second file and too large a file', async () => {
    const text = await uploadFile(svc, key, Buffer.from('just some text, not a document'), 'notes.pdf');
    assert.equal(text.status, 422);
    assert.equal(text.body.error.type, 'ValidationException');
    assert.match(text.body.error.details.files[0], /PDF, Word/);
    const empty = await uploadFile(svc, key, Buffer.alloc(0), 'empty.pdf');
    assert.equal(empty.status, 422);
    assert.match(empty.body.error.details.files[0], /empty/);
    const noFile = await fetch(`${svc.url}/v1/books`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: (() => { const f = new FormData(); f.append('status', 'draft'); return f; })() });
    assert.equal(noFile.status, 422);
    const two = new FormData();
    two.append('files[]', new Blob([new Uint8Array(await makePng(10, 10))]), 'a.png');
    two.append('files[]', new Blob([new Uint8Array(await makePng(10, 10))]), 'b.png');
    const twoFiles = await fetch(`${svc.url}/v1/books`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: two });
    assert.ok([413, 422].includes(twoFiles.status), `two files: ${twoFiles.status}`);
    const big = await uploadFile(svc, key, Buffer.alloc(6 * 1024 * 1024, 1), 'big.pdf');
    assert.equal(big.status, 413);
    assert.equal(big.body.error.type, 'PayloadTooLargeException');
    const json = await svc.request('POST', '/v1/books', { key, body: { files: 'x' } });
    assert.equal(json.status, 415);
    const badField = await uploadFile(svc, key, await makePng(10, 10), 'x.png', { status: 'archived' });
    assert.equal(badField.status, 422);
    assert.ok(badField.body.error.details.status);
    const active = await svc.request('GET', '/v1/books/uploads/status/active', { key });
    assert.equal(active.status, 200);
  });

  it('ends a damaged or unreadable document in a failed batch with a readable message', async () => {
    const pdf = await makePdf({ pages: 2 });
    const truncated = pdf.subarray(0, 200);
    const batch = await convert(Buffer.concat([truncated]), 'broken.pdf');
    assert.equal(batch.status, 'failed');
    assert.ok(batch.error.message.length > 10);
    assert.doesNotMatch(batch.error.message, /at .*\.ts:\d+/, 'no stack trace');
    assert.equal(batch.books[0].page_images_status, 'failed');
  });

  it('reports progress while converting and lists the batch as active', async () => {
    const res = await uploadFile(svc, key, await makePdf({ pages: 40 }), 'long.pdf');
    const id = res.body.data.batch_id;
    const status = await svc.request('GET', `/v1/books/uploads/${id}/status`, { key });
    assert.equal(status.status, 200);
    assert.equal(status.body.data.id, id);
    const done = await waitForBatch(svc, key, id);
    assert.equal(done.status, 'completed');
    assert.equal(done.progress.total, 40);
    assert.equal(done.progress.completed, 40);
    const active = await svc.request('GET', '/v1/books/uploads/status/active', { key });
    assert.ok(!active.body.data.some((b: { id: string }) => b.id === id));
  });

  describe('real-world documents', { skip: CORPUS_SKIP }, () => {
    async function fixture(name: string, fields: Record<string, string> = {}) {
      return convert(await readFile(corpus(name)), name, fields);
    }

    it('tracemonkey.pdf: 14 pages, the title on page 1', async () => {
      const batch = await fixture('tracemonkey.pdf');
      assert.equal(batch.status, 'completed');
      assert.equal(batch.books[0].page_count, 14);
      const pages = await svc.request('GET', `/v1/books/${batch.books[0].random_id}/pages`, { key, query: { limit: 1 } });
      assert.ok(pages.body.data[0].text.some((t: { text: string }) => /Trace-based Just-in-Time/.test(t.text)));
      assert.equal(pages.body.meta.has_more, true);
    });

    it('not-a-pdf-jpeg-bytes.pdf is read as the JPEG it is', async () => {
      const batch = await fixture('not-a-pdf-jpeg-bytes.pdf');
      assert.equal(batch.status, 'completed');
      assert.equal(batch.source_format, 'jpeg');
    });

    it('Landscape_6.jpg is turned by its EXIF orientation', async () => {
      const batch = await fixture('Landscape_6.jpg');
      const pages = await svc.request('GET', `/v1/books/${batch.books[0].random_id}/pages`, { key });
      const page = pages.body.data[0];
      assert.ok(page.width > page.height, `landscape expected, got ${page.width}x${page.height}`);
    });

    it('an encrypted PDF without its password fails, and converts with it', async () => {
      const without = await fixture('libreoffice-writer-password.pdf');
      assert.equal(without.status, 'failed');
      assert.equal(without.error.code, 'password_required');
      const withPassword = await fixture('libreoffice-writer-password.pdf', { password: 'openpassword' });
      assert.equal(withPassword.status, 'completed');
      assert.equal(withPassword.books[0].page_count, 1);
    });

    it('garbage and zero-page PDFs fail cleanly', async () => {
      for (const name of ['bug1020226.pdf', 'issue15590.pdf']) {
        const batch = await fixture(name);
        assert.equal(batch.status, 'failed', name);
        assert.ok(batch.error.message, name);
      }
    });

    it('an outline PDF keeps its table of contents and internal links', async () => {
      const batch = await fixture('pdflatex-outline.pdf');
      assert.equal(batch.status, 'completed');
      const pages = await svc.request('GET', `/v1/books/${batch.books[0].random_id}/pages`, { key });
      const internal = pages.body.data.flatMap((p: { links: { page?: number }[] }) => p.links).filter((l: { page?: number }) => l.page);
      assert.ok(internal.length > 0);
    });

    it('office documents go through LibreOffice', { skip: sofficeSkip }, async () => {
      for (const [name, format] of [['Bug51170.docx', 'docx'], ['45544.xlsx', 'xlsx'], ['themes.pptx', 'pptx'], ['SampleDoc.doc', 'doc']] as const) {
        const batch = await fixture(name);
        assert.equal(batch.status, 'completed', `${name}: ${JSON.stringify(batch.error)}`);
        assert.equal(batch.source_format, format);
        assert.ok(batch.books[0].page_count >= 1, name);
      }
      const broken = await fixture('truncated62886.docx');
      assert.equal(broken.status, 'failed');
    });
  });
});
