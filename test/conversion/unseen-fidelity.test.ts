/**
 * Fidelity on the shapes of documents an independent set of real ones showed
 * (issue 32), through the real service: upload, conversion job, API and the
 * reader in Chromium. Each document is made here the way the real one was
 * made (unseen-documents.ts).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { convertDocument, startService, uploadFile, waitForBatch, type TestService } from '../helpers.ts';
import { CHROMIUM_SKIP, launchBrowser, openReader, openTab } from '../reader/browser.ts';
import { compareInk, popplerReference } from './ink.ts';
import { normaliseTextContent } from '../../src/modules/conversion/pdf-page-data.ts';
import { FONT_SKIP, clusterMappedArabicPdf, noCmapTablePdf, stampAndFormPdf, verticalJapaneseNotEmbeddedPdf, verticalJapanesePdf, visualOrderArabicPdf } from './unseen-documents.ts';

describe('conversion fidelity on unseen documents (issue 32)', () => {
  let svc: TestService;
  let key: string;
  before(async () => {
    svc = await startService({ env: { PAGE_WIDTHS: '320,1024' } });
    key = (await svc.workspace()).key;
  });
  after(() => svc.stop());

  async function upload(bytes: Uint8Array, filename: string, fields?: Record<string, string>) {
    const converted = await convertDocument(svc, key, bytes, filename, fields);
    assert.equal(converted.batch.status, 'completed', JSON.stringify(converted.batch.error));
    return converted;
  }
  const pages = async (book: string) => (await svc.request('GET', `/v1/books/${book}/pages`, { key })).body.data;
  const search = async (book: string, q: string) => (await svc.request('GET', `/read/${book}/search`, { query: { q } })).body;

  describe('vertical Japanese (Identity-V CID font)', { skip: FONT_SKIP }, () => {
    const columns = ['吾輩は猫である。', '名前はまだ無い。', 'どこで生れたか'];
    let book: string;
    before(async () => {
      ({ book } = await upload(verticalJapanesePdf(columns, { column: 0, text: 'わがはい' }), 'tategaki.pdf'));
    });

    it('keeps every column as a tall run, right to left, found by the search API', async () => {
      const [page] = await pages(book);
      const runs = page.text as { text: string; x: number; y: number; width: number; height: number; angle?: number }[];
      for (const column of columns) {
        const run = runs.find((r) => r.text === column);
        assert.ok(run, `run ${column} in ${JSON.stringify(runs)}`);
        assert.equal(run.angle, 90, 'read downwards');
        assert.ok(run.height > 0.25 && run.width < 0.1, `a tall narrow box: ${JSON.stringify(run)}`);
      }
      const xs = columns.map((c) => runs.find((r) => r.text === c)!.x);
      assert.ok(xs[0]! > xs[1]! && xs[1]! > xs[2]!, `columns go right to left: ${xs}`);
      assert.ok(runs.some((r) => r.text === 'わがはい'), 'the ruby is kept');
      const found = await search(book, '猫である');
      assert.equal(found.total, 1, JSON.stringify(found));
      const [x, y, w, h] = found.hits[0].rects[0] as number[];
      const first = runs.find((r) => r.text === columns[0])!;
      assert.ok(Math.abs(x! - first.x) < 0.01 && w! < 0.1 && h! < first.height && y! > first.y, `the highlight is inside the column: ${found.hits[0].rects[0]}`);
    });

    it('in a font the PDF does not embed (UniJIS-UCS2-V): typed punctuation, not vertical forms, so "。" is found', async () => {
      const { book: other } = await upload(verticalJapaneseNotEmbeddedPdf(columns.slice(0, 2)), 'tategaki-ryumin.pdf');
      const [page] = await pages(other);
      assert.deepEqual(page.text.map((r: { text: string; angle?: number }) => [r.text, r.angle]), [[columns[0], 90], [columns[1], 90]]);
      assert.equal((await search(other, '猫である。')).total, 1);
    });

    it('keeps a vertical run that pdf.js measures only by its height (width 0), whatever the style says', () => {
      // As pdf.js reported the runs of the real 61-page book: width 0, the advance in the height, direction "ttb".
      const content = {
        items: [{ str: '名前はまだ無い。', dir: 'ttb', width: 0, height: 144, transform: [18, 0, 0, 18, 225.6, 380], fontName: 'f1', hasEOL: true }],
        styles: { f1: { fontFamily: 'serif', ascent: 0.88, descent: -0.12, vertical: false } },
        lang: null,
      };
      const [run] = normaliseTextContent(content as never, { transform: [1, 0, 0, -1, 0, 420], width: 298, height: 420 });
      assert.ok(run, 'the run is kept');
      assert.equal(run.angle, 90);
      assert.ok(Math.abs(run.height - 144 / 420) < 0.001 && Math.abs(run.width - 18 / 298) < 0.001, JSON.stringify(run));
    });

    it('is found by the reader\'s search in Chromium, which highlights it on the page', { skip: CHROMIUM_SKIP }, async () => {
      const browser = await launchBrowser();
      try {
        const t = await openTab(browser);
        await openReader(t.page, `${svc.url}/read/${book}`);
        await t.page.click('#open-search');
        await t.page.fill('#search-q', '名前はまだ');
        await t.page.press('#search-q', 'Enter');
        const result = t.page.locator('#search-results button[data-page="1"]');
        await result.waitFor();
        assert.match(await t.page.locator('#search-status').textContent() ?? '', /1 page contains/);
        await result.click();
        await t.page.locator('#stage .page[data-page="1"] .hit').first().waitFor();
        assert.deepEqual(t.problems, []);
      } finally {
        await browser.close();
      }
    });
  });

  describe('Arabic painted in visual order, on pages rotated 0, 90, 180 and 270 degrees', { skip: FONT_SKIP }, () => {
    for (const mode of ['runs', 'line', 'glyphs', 'tj'] as const) {
      it(`stores the word in logical order and search finds every page (${mode})`, async () => {
        const { book } = await upload(visualOrderArabicPdf([0, 90, 180, 270], mode), `habibi-${mode}.pdf`);
        const text = (await svc.request('GET', `/read/${book}/text`, { query: { from: 1, to: 4 } })).body.pages as { page: number; text: string }[];
        for (const page of text) assert.match(page.text, /حَبيبي/, `page ${page.page}: ${page.text}`);
        // The same line on every page, whatever its /Rotate.
        assert.deepEqual(text.map((page) => page.text), Array(4).fill(text[0]!.text), 'the same text on every rotation');
        const found = await search(book, 'حَبيبي');
        assert.deepEqual(found.hits.map((hit: { page: number }) => hit.page), [1, 2, 3, 4], JSON.stringify(found));
      });
    }

    it('as WeasyPrint/cairo writes it (one glyph carries the cluster\'s logical text): stored in logical order, found by the reader\'s search', async () => {
      const { book } = await upload(clusterMappedArabicPdf(), 'habibi-cairo.pdf');
      const text = (await svc.request('GET', `/read/${book}/text`, { query: { from: 1, to: 4 } })).body.pages as { page: number; text: string }[];
      assert.deepEqual(text.map((page) => page.text), Array(4).fill('حَبيبي habibi'));
      assert.deepEqual((await search(book, 'حَبيبي')).hits.map((hit: { page: number }) => hit.page), [1, 2, 3, 4]);
      if (CHROMIUM_SKIP) return;
      const browser = await launchBrowser();
      try {
        const t = await openTab(browser);
        await openReader(t.page, `${svc.url}/read/${book}`);
        await t.page.click('#open-search');
        await t.page.fill('#search-q', 'حَبيبي');
        await t.page.press('#search-q', 'Enter');
        await t.page.locator('#search-results button[data-page="4"]').waitFor();
        assert.match(await t.page.locator('#search-status').textContent() ?? '', /4 pages contain/);
        assert.deepEqual(t.problems, []);
      } finally {
        await browser.close();
      }
    });
  });

  describe('a huge 1-bit CCITT image, in the renditions drawn on first request', () => {
    let fax: TestService;
    let faxKey: string;
    before(async () => {
      // The defaults: 2048 px drawn on first request, zoom renditions up to 5120 px.
      fax = await startService();
      faxKey = (await fax.workspace()).key;
    });
    after(() => fax.stop());

    it('draws the 2048 px rendition on first request with the ink pdftoppm puts there (no region lost)', async () => {
      // 12000 x 8400 CCITT G4, made with ppm2tiff -c g4 and tiff2pdf (test/fixtures/conversion/README.md).
      const pdf = await readFile(path.resolve(import.meta.dirname, '../fixtures/conversion/huge-ccitt-page.pdf'));
      const res = await uploadFile(fax, faxKey, pdf, 'fax.pdf', { status: 'publish' });
      assert.equal(res.status, 202, res.text);
      const batch = await waitForBatch(fax, faxKey, res.body.data.batch_id);
      assert.equal(batch.status, 'completed');
      const [page] = (await fax.request('GET', `/v1/books/${batch.books[0].random_id}/pages`, { key: faxKey })).body.data;
      const lazy = (page.images as { width: number; height: number; url: string }[]).find((image) => image.width === 2048)!;
      const dir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-fax-ink-'));
      try {
        const source = path.join(dir, 'fax.pdf');
        await writeFile(source, pdf);
        const drawn = await fetch(lazy.url);
        assert.equal(drawn.status, 200);
        const ink = await compareInk(Buffer.from(await drawn.arrayBuffer()), await popplerReference(source, 1, lazy.width, lazy.height));
        assert.ok(ink.inked > 100 && ink.lost === 0 && ink.ratio > 0.9, `2048 px: ${JSON.stringify(ink)}`);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });

  describe('a table column set in an embedded TrueType font without a cmap table', { skip: FONT_SKIP }, () => {
    for (const cid of [false, true]) {
      it(`is drawn in full on every page using it, as pdftoppm draws it (${cid ? 'CID-keyed' : 'simple symbolic'} font): no region loses its ink, no warning`, async () => {
        const pdf = noCmapTablePdf(cid);
        const { batch, book } = await upload(pdf, `report-${cid ? 'cid' : 'simple'}.pdf`);
        assert.deepEqual(batch.warnings, []);
        for (const page of await pages(book)) {
          assert.deepEqual(page.warnings, []);
          assert.ok(page.text.some((run: { text: string }) => run.text.includes('58,440')), 'the column is in the text layer');
          const image = (page.images as { width: number; height: number; url: string }[]).find((i) => i.width === 1024)!;
          const dir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-cmap-'));
          try {
            await writeFile(path.join(dir, 'report.pdf'), pdf);
            const ink = await compareInk(Buffer.from(await (await fetch(image.url)).arrayBuffer()), await popplerReference(path.join(dir, 'report.pdf'), page.number, image.width, image.height));
            assert.ok(ink.inked > 40, JSON.stringify(ink));
            assert.equal(ink.lost, 0, `page ${page.number}, regions that lost their ink: ${JSON.stringify(ink)}`);
          } finally {
            await rm(dir, { recursive: true, force: true });
          }
        }
      });
    }
  });

  it('makes the text of a filled form field and of a stamp\'s appearance searchable, boxed where they are drawn', async () => {
    const { book } = await upload(await stampAndFormPdf(), 'order.pdf');
    const [page] = await pages(book);
    const field = page.text.find((run: { text: string }) => run.text === 'Quillfeather Stationers');
    const stamp = page.text.find((run: { text: string }) => run.text === 'GEPRUEFT ZAHLBAR');
    assert.ok(field && stamp, JSON.stringify(page.text));
    // pdf-lib's field at x 72-372, y 600-630 (of 600 x 800); the stamp at 320-520, 400-460.
    assert.ok(Math.abs(field.x - 71.5 / 600) < 0.01 && Math.abs(field.y - (800 - 630.5) / 800) < 0.01, JSON.stringify(field));
    assert.ok(Math.abs(stamp.x - 320 / 600) < 0.01 && Math.abs(stamp.y - 340 / 800) < 0.01, JSON.stringify(stamp));
    for (const words of ['Quillfeather', 'GEPRUEFT ZAHLBAR', 'Purchase order']) assert.equal((await search(book, words)).total, 1, words);
  });
});
