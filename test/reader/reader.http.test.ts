/**
 * The reader over plain HTTP: who sees what (404, 410, the billing notice),
 * the page's metadata and security headers, search, text, downloads (with
 * qpdf encryption) and the bundle. The browser behaviour is in
 * reader.browser.test.ts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import Fastify from 'fastify';
import { PDFDocument } from 'pdf-lib';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { DEFAULT_SETTINGS } from '../../src/modules/books/books.settings.ts';
import { books } from '../../src/modules/books/books.tables.ts';
import { BUNDLE_BUDGET_GZIP, bundleSizes, readerBundle } from '../../src/modules/reader/reader.bundle.ts';
import type { ReaderAccessPolicy } from '../../src/modules/reader/reader.access.ts';
import { readerRoutes } from '../../src/modules/reader/reader.routes.ts';
import { ReaderService } from '../../src/modules/reader/reader.service.ts';
import { makePdf } from '../documents.ts';
import { insertBook } from '../factories.ts';
import { eventually, roomInRateLimitWindow, startService, type ApiResponse, type TestService } from '../helpers.ts';
import { publishBook, updateBook } from './browser.ts';

const run = promisify(execFile);
const qpdfSkip = await run('qpdf', ['--version']).then(() => false, () => 'qpdf is not installed (apt-get install -y qpdf)');

describe('reader over HTTP', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let book: { randomId: string; url: string };

  before(async () => {
    svc = await startService();
    ws = await svc.workspace();
    book = await publishBook(svc, ws.key, await makePdf({ pages: 6, links: true }), 'Spring catalogue.pdf', { description: 'Our spring range, <b>new</b> & improved.' });
  });
  after(() => svc.stop());

  it('serves the published book as HTML with metadata for search engines and link previews', async () => {
    const res = await fetch(book.url);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const html = await res.text();
    assert.match(html, /<title>Spring catalogue<\/title>/);
    assert.match(html, /<meta name="description" content="Our spring range, &lt;b&gt;new&lt;\/b&gt; &amp; improved.">/);
    assert.ok(html.includes(`<link rel="canonical" href="${book.url}">`));
    assert.match(html, /<meta property="og:image" content="[^"]+\/p1-w1024\.webp">/);
    assert.match(html, /<meta name="twitter:card" content="summary_large_image">/);
    const ld = JSON.parse(/<script type="application\/ld\+json">(.*?)<\/script>/.exec(html)![1]!);
    assert.equal(ld['@type'], 'Book');
    assert.equal(ld.name, 'Spring catalogue');
    assert.equal(ld.numberOfPages, 6);
    assert.equal(ld.url, book.url);
    // The page text is real HTML (text view), and the cover a real image with srcset.
    for (let n = 1; n <= 6; n++) assert.ok(html.includes(`Page ${n} of 6`), `text of page ${n}`);
    assert.match(html, /<img class="ssr-lo" alt="Page 1" src="[^"]+320[^"]*"/);
    assert.match(html, /<img class="ssr-img" data-page="1" alt="" src="[^"]+" srcset="[^"]+ 320w, [^"]+ 1024w, [^"]+ 2048w" sizes="/);
  });

  it('sends a strict Content-Security-Policy, allows framing and runs no inline script', async () => {
    const res = await fetch(book.url);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.match(csp, /frame-ancestors \*/);
    assert.equal(res.headers.get('x-frame-options'), null);
    const html = await res.text();
    const nonce = /'nonce-([^']+)'/.exec(csp)![1];
    for (const tag of html.match(/<script\b[^>]*>/g) ?? []) {
      assert.ok(/\bsrc="\/reader-assets\//.test(tag) || /type="application\/(ld\+)?json"/.test(tag), `inline script: ${tag}`);
    }
    for (const tag of html.match(/<style\b[^>]*>/g) ?? []) assert.ok(tag.includes(`nonce="${nonce}"`), tag);
    assert.doesNotMatch(html, /\sstyle="/, 'no style attributes (CSP blocks them)');
    assert.doesNotMatch(html, /\son[a-z]+="/, 'no inline event handlers');
  });

  it('compresses the page and serves the bundle immutable, within its size budget', async () => {
    const res = await fetch(book.url, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(res.headers.get('content-encoding'), 'gzip');
    const html = await res.text();
    const script = /<script src="(\/reader-assets\/reader\.[\w-]+\.js)"/.exec(html)![1]!;
    const style = /<link rel="stylesheet" href="(\/reader-assets\/reader\.[\w-]+\.css)"/.exec(html)![1]!;
    for (const asset of [script, style]) {
      const r = await fetch(svc.url + asset);
      assert.equal(r.status, 200);
      assert.match(r.headers.get('cache-control') ?? '', /immutable/);
      assert.ok((await r.text()).length > 1000);
    }
    assert.equal((await fetch(`${svc.url}/reader-assets/reader.nothing.js`)).status, 404);
    const sizes = bundleSizes(await readerBundle());
    assert.ok(sizes.total.gzip < BUNDLE_BUDGET_GZIP, `bundle ${sizes.total.gzip} bytes gzipped`);
  });

  it('answers 404 pages for unknown ids and drafts, 410 once expired', async () => {
    for (const id of ['AAAAAAAAAAAAAAAAAAAAAA', 'nope', '..%2F..%2Fetc']) {
      const res = await fetch(`${svc.url}/read/${id}`);
      assert.equal(res.status, 404, id);
      assert.match(await res.text(), /Flipbook not found/);
    }
    const draft = await insertBook(svc, ws.id, { status: 'draft' });
    assert.equal((await fetch(`${svc.url}/read/${draft.randomId}`)).status, 404);
    const converting = await insertBook(svc, ws.id, { status: 'publish', pageImagesStatus: 'processing' });
    assert.equal((await fetch(`${svc.url}/read/${converting.randomId}`)).status, 404);
    const later = await insertBook(svc, ws.id, { status: 'schedule', publishedDate: new Date(Date.now() + 86_400_000) });
    assert.equal((await fetch(`${svc.url}/read/${later.randomId}`)).status, 404);

    const expired = await insertBook(svc, ws.id, { status: 'publish', expiresAt: new Date(Date.now() - 1000) });
    const gone = await fetch(`${svc.url}/read/${expired.randomId}`);
    assert.equal(gone.status, 410);
    assert.match(await gone.text(), /no longer available/);
    // Also after the expiry job has unpublished it.
    await svc.runtime.database.db.update(books).set({ status: 'draft', unpublishedAt: new Date() }).where(eq(books.id, expired.id));
    assert.equal((await fetch(`${svc.url}/read/${expired.randomId}`)).status, 410);
    assert.equal((await fetch(`${svc.url}/read/${expired.randomId}/search?q=x`)).status, 410);
  });

  it('shows an expired notice once billing lapsed past the grace period', async () => {
    const recent = await insertBook(svc, ws.id, { status: 'publish', billingExpiresAt: new Date(Date.now() - 86_400_000) });
    const stillReadable = await fetch(`${svc.url}/read/${recent.randomId}`);
    assert.equal(stillReadable.status, 200);
    assert.doesNotMatch(await stillReadable.text(), /temporarily unavailable/);

    const lapsed = await insertBook(svc, ws.id, { status: 'publish', billingExpiresAt: new Date(Date.now() - 8 * 86_400_000) });
    const res = await fetch(`${svc.url}/read/${lapsed.randomId}`);
    assert.equal(res.status, 200);
    const html = await res.text();
    assert.match(html, /temporarily unavailable/);
    assert.doesNotMatch(html, /reader-data/);
    const status = await svc.request('GET', `/v1/books/${lapsed.randomId}`, { key: ws.key });
    assert.equal(status.body.data.status, 'publish', 'the book stays published');
  });

  it('shows the made-with badge unless the plan may remove it and the book turns it off', async () => {
    const settings = { ...DEFAULT_SETTINGS, made_with_badge_enabled: false };
    const pro = await svc.workspace({ plan: 'pro' });
    const free = await svc.workspace({ plan: 'free' });
    for (const [workspace, badge] of [[pro, false], [free, true]] as const) {
      const row = await insertBook(svc, workspace.id, { status: 'publish', settings });
      const html = await (await fetch(`${svc.url}/read/${row.randomId}`)).text();
      assert.equal(html.includes('Made with <strong>Flipbook</strong>'), badge, `plan of workspace ${workspace.id}`);
    }
  });

  it('uses a background colour or image, and lets only that image origin into img-src', async () => {
    const colour = await insertBook(svc, ws.id, { status: 'publish', settings: { ...DEFAULT_SETTINGS, background: '#112233' } });
    assert.match(await (await fetch(`${svc.url}/read/${colour.randomId}`)).text(), /\.stage\{background:#112233\}/);
    const image = await insertBook(svc, ws.id, { status: 'publish', settings: { ...DEFAULT_SETTINGS, background: 'https://cdn.example.com/paper.jpg', image_display: 'repeat' } });
    const res = await fetch(`${svc.url}/read/${image.randomId}`);
    assert.match(res.headers.get('content-security-policy') ?? '', /img-src 'self' data: http:\/\/127\.0\.0\.1:\d+ https:\/\/cdn\.example\.com;/);
    assert.match(await res.text(), /\.stage\{background-image:url\("https:\/\/cdn\.example\.com\/paper\.jpg"\);background-repeat:repeat\}/);
    const hostile = await insertBook(svc, ws.id, { status: 'publish', settings: { ...DEFAULT_SETTINGS, background: 'red}</style><script>alert(1)</script>' } });
    const html = await (await fetch(`${svc.url}/read/${hostile.randomId}`)).text();
    assert.doesNotMatch(html, /alert\(1\)/);
  });

  it('puts page text in the page up to a budget; the rest comes from the text endpoint', async () => {
    const found = await svc.request('GET', `/v1/books/${book.randomId}`, { key: ws.key });
    assert.equal(found.status, 200);
    const service = new ReaderService({ db: svc.runtime.database.db, storage: svc.runtime.storage, config: svc.runtime.config, textBudgetChars: 150 });
    const readerBook = (await service.find(book.randomId))!;
    const content = await service.content(readerBook);
    assert.ok(content.data.textUntil >= 1 && content.data.textUntil < 6, `text until page ${content.data.textUntil}`);
    assert.equal(content.texts.length, content.data.textUntil);
    assert.equal(content.data.pages.length, 6);
    // 320 and 1024 px stored by the conversion; 2048 px and the zoom renditions (to 5120 px) drawn on their first request.
    assert.deepEqual(content.data.pages[0]!.i.map(([w, , , onDemand]) => [w, onDemand ?? 0]), [[320, 0], [1024, 0], [2048, 1], [3072, 2], [4096, 2], [5120, 2]]);
    assert.ok(content.data.pages[0]!.l!.some((l) => l[4] === 6), 'the internal link');
    assert.ok(content.data.pages[0]!.l!.some((l) => l[4] === 'https://example.com/annotated'));
  });

  it('asks the access policy (the hook for access gates and embed domains) on every request', async () => {
    const seen: string[] = [];
    const policy: ReaderAccessPolicy = {
      async check(request) {
        seen.push(request.kind);
        if (request.query.token === 'letmein') return { allow: true, frameAncestors: ["'self'", 'https://shop.example'] };
        return { allow: false, status: 403, title: 'Private flipbook', message: 'Sign in to read it.', html: request.kind === 'page' ? (nonce) => `<!doctype html><p data-nonce="${nonce}">Gate form</p>` : undefined };
      },
    };
    const app = Fastify();
    await app.register(readerRoutes, { db: svc.runtime.database.db, storage: svc.runtime.storage, config: svc.runtime.config, access: policy });
    try {
      const refused = await app.inject({ url: `/read/${book.randomId}` });
      assert.equal(refused.statusCode, 403);
      // The page gets the nonce its Content-Security-Policy allows.
      const nonce = /'nonce-([^']+)'/.exec(String(refused.headers['content-security-policy']))![1];
      assert.equal(refused.body, `<!doctype html><p data-nonce="${nonce}">Gate form</p>`);
      assert.equal((await app.inject({ url: `/read/${book.randomId}/search?q=page` })).statusCode, 403);
      assert.equal((await app.inject({ url: `/read/${book.randomId}/download` })).statusCode, 403);
      const allowed = await app.inject({ url: `/read/${book.randomId}?token=letmein` });
      assert.equal(allowed.statusCode, 200);
      assert.match(String(allowed.headers['content-security-policy']), /frame-ancestors 'self' https:\/\/shop\.example;/);
      assert.deepEqual(seen, ['page', 'search', 'download', 'page']);
      // Unknown books never reach the policy.
      assert.equal((await app.inject({ url: '/read/AAAAAAAAAAAAAAAAAAAAAA' })).statusCode, 404);
      assert.equal(seen.length, 4);
    } finally {
      await app.close();
    }
  });

  it('searches the text, case- and whitespace-insensitively, with highlight rects', async () => {
    const res = await svc.request('GET', `/read/${book.randomId}/search`, { query: { q: '  page 5   OF 6 ' } });
    assert.equal(res.status, 200);
    assert.equal(res.body.total, 1);
    const [hit] = res.body.hits;
    assert.equal(hit.page, 5);
    assert.equal(hit.match, 'Page 5 of 6');
    assert.ok(hit.rects.length >= 1);
    for (const value of hit.rects[0]) assert.ok(value >= 0 && value <= 1);
    const many = await svc.request('GET', `/read/${book.randomId}/search`, { query: { q: 'paragraph' } });
    assert.deepEqual(many.body.hits.map((h: { page: number }) => h.page), [1, 2, 3, 4, 5, 6]);
    const none = await svc.request('GET', `/read/${book.randomId}/search`, { query: { q: '100%_' } });
    assert.equal(none.body.total, 0);
    assert.equal((await svc.request('GET', `/read/${book.randomId}/search`)).status, 422);
  });

  it('pages through every search result with offset, and lists every matching page', async () => {
    const first = await (await fetch(`${book.url}/search?q=paragraph`)).json() as { total: number; offset: number; pages: number[]; hits: { page: number }[] };
    assert.equal(first.total, 6);
    assert.deepEqual(first.pages, [1, 2, 3, 4, 5, 6]);
    assert.equal(first.offset, 0);
    const later = await (await fetch(`${book.url}/search?q=paragraph&offset=4`)).json() as typeof first;
    assert.deepEqual(later.hits.map((h) => h.page), [5, 6]);
    assert.equal(later.offset, 4);
    assert.equal((await fetch(`${book.url}/search?q=paragraph&offset=-1`)).status, 422);
  });

  it('serves the positioned text runs of a page for the text layer', async () => {
    const layer = await (await fetch(`${book.url}/text-layer?page=2`)).json() as { page: number; items: [number, number, number, number, string][] };
    assert.equal(layer.page, 2);
    const run = layer.items.find((item) => item[4].includes('Page 2 of 6'));
    assert.ok(run, 'the page title is a run');
    for (const n of run.slice(0, 4) as number[]) assert.ok(n >= 0 && n <= 1);
    assert.equal((await fetch(`${book.url}/text-layer?page=99`)).status, 404);
    assert.equal((await fetch(`${book.url}/text-layer?page=x`)).status, 422);
  });

  it('serves page text beyond what the page carries', async () => {
    const res = await svc.request('GET', `/read/${book.randomId}/text`, { query: { from: 5, to: 9 } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.pages.map((p: { page: number }) => p.page), [5, 6]);
    assert.match(res.body.pages[0].text, /Page 5 of 6/);
    assert.equal((await svc.request('GET', `/read/${book.randomId}/text`, { query: { from: 3, to: 1 } })).status, 422);
  });

  it('limits searches per client, with Retry-After', async () => {
    await roomInRateLimitWindow();
    let limited: ApiResponse | null = null;
    let sent = 0;
    while (!limited && sent < 100) {
      const res = await svc.request('GET', `/read/${book.randomId}/search`, { query: { q: `word${sent}` } });
      sent++;
      if (res.status === 429) limited = res;
      else assert.equal(res.status, 200);
    }
    assert.ok(limited, 'a client searching without pause is stopped');
    assert.ok(sent > 50, `at least 50 searches a minute are allowed (stopped after ${sent})`);
    assert.equal(limited.body.error.type, 'RateLimitException');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
  });

  it('downloads the PDF only when downloadable', async () => {
    await updateBook(svc, ws.key, book.randomId, { downloadable_pdf: false });
    const refused = await fetch(`${book.url}/download`);
    assert.equal(refused.status, 404);
    assert.doesNotMatch(await (await fetch(book.url)).text(), /id="download"/);

    await updateBook(svc, ws.key, book.randomId, { downloadable_pdf: true });
    assert.match(await (await fetch(book.url)).text(), /<a class="btn" id="download" href="\/read\/[\w-]+\/download" download/);
    const res = await fetch(`${book.url}/download`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/pdf');
    assert.match(res.headers.get('content-disposition') ?? '', /attachment; filename="Spring catalogue.pdf"/);
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.equal(bytes.subarray(0, 5).toString(), '%PDF-');
    assert.equal((await PDFDocument.load(bytes)).getPageCount(), 6);
  });

  it('offers the page or the spread shown when the download mode says so (bulk settings\' downloadable_pdf)', { skip: qpdfSkip }, async () => {
    /** The "Page N of 6" headings of a downloaded PDF, in order. */
    const headings = async (res: Response): Promise<string[]> => {
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/pdf');
      const pdf = await getDocument({ data: new Uint8Array(await res.arrayBuffer()), verbosity: 0 }).promise;
      const found: string[] = [];
      for (let n = 1; n <= pdf.numPages; n++) {
        const items = (await (await pdf.getPage(n)).getTextContent()).items as Array<{ str: string }>;
        found.push(items.map((i) => i.str).find((t) => /^Page \d of 6$/.test(t)) ?? '?');
      }
      await pdf.destroy();
      return found;
    };
    const setMode = async (mode: 'single' | 'spread' | 'full') => {
      const read = await svc.request('POST', '/v1/books/bulk-settings/summary', { key: ws.key, body: { book_ids: [book.randomId] } });
      const created = await svc.request('POST', '/v1/books/bulk-settings/batches', {
        key: ws.key, body: { books: [{ id: book.randomId, settings_revision: read.body.data.books[0].settings_revision }], settings: { downloadable_pdf: mode } },
      });
      assert.equal(created.status, 202, created.text);
      await eventually(async () => {
        const res = await svc.request('GET', `/v1/books/bulk-settings/batches/${created.body.data.id}`, { key: ws.key });
        return res.body.data.status === 'completed' ? res.body.data : null;
      });
    };
    try {
      await setMode('single');
      const single = await fetch(`${book.url}/download?page=4`);
      assert.match(single.headers.get('content-disposition') ?? '', /filename="Spring catalogue - page 4\.pdf"/);
      assert.deepEqual(await headings(single), ['Page 4 of 6']);
      assert.deepEqual(await headings(await fetch(`${book.url}/download`)), ['Page 1 of 6'], 'no page: the first');
      assert.equal((await fetch(`${book.url}/download?page=7`)).status, 400);
      assert.equal((await fetch(`${book.url}/download?page=x`)).status, 400);

      await setMode('spread');
      assert.deepEqual(await headings(await fetch(`${book.url}/download?page=1`)), ['Page 1 of 6'], 'the cover is a spread of its own');
      assert.deepEqual(await headings(await fetch(`${book.url}/download?page=5`)), ['Page 4 of 6', 'Page 5 of 6']);
      assert.deepEqual(await headings(await fetch(`${book.url}/download?page=6`)), ['Page 6 of 6'], 'the last page of an even book is alone');
    } finally {
      await setMode('full');
    }
    assert.equal((await headings(await fetch(`${book.url}/download?page=4`))).length, 6, 'full: the whole book whatever the page');
  });

  it('encrypts the download with the pdf_password', { skip: qpdfSkip }, async () => {
    await updateBook(svc, ws.key, book.randomId, { downloadable_pdf: true, pdf_password: 'open sesame' });
    const res = await fetch(`${book.url}/download`);
    assert.equal(res.status, 200);
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.equal(Number(res.headers.get('content-length')), bytes.length);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'reader-test-'));
    try {
      const file = path.join(dir, 'download.pdf');
      await writeFile(file, bytes);
      // qpdf --requires-password exits 0 when a password is needed to open the file.
      await run('qpdf', ['--requires-password', file]);
      const { stdout } = await run('qpdf', ['--password=open sesame', '--show-encryption', file]);
      assert.match(stdout, /AESv3|256/);
      await assert.rejects(run('qpdf', ['--password=wrong', '--check', file]));
      await run('qpdf', ['--password=open sesame', '--check', file]);
    } finally {
      await rm(dir, { recursive: true, force: true });
      await updateBook(svc, ws.key, book.randomId, { pdf_password: '' });
    }
  });

  it('takes the reading direction, page layout and slideshow as book settings, through PUT and bulk settings', async () => {
    const get = async () => (await svc.request('GET', `/v1/books/${book.randomId}`, { key: ws.key })).body.data.settings;
    const readerData = async () => JSON.parse(/<script type="application\/json" id="reader-data">(.*?)<\/script>/.exec(await (await fetch(book.url)).text())![1]!);
    // Defaults: every record shows them; the reader's data leaves them out.
    const defaults = await get();
    assert.equal(defaults.reading_direction, 'ltr');
    assert.equal(defaults.page_layout, 'auto');
    assert.equal(defaults.autoplay_interval, null);
    const plain = await readerData();
    assert.equal(plain.dir, undefined);
    assert.equal(plain.layout, undefined);
    assert.equal(plain.auto, undefined);
    // Bad values are 422s with the envelope, never stored.
    for (const body of [{ reading_direction: 'up' }, { page_layout: 'triple' }, { autoplay_interval: 1 }, { autoplay_interval: 121 }, { autoplay_interval: 2.5 }]) {
      const res = await svc.request('PUT', `/v1/books/${book.randomId}`, { key: ws.key, body: { status: 'publish', ...body } });
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.ok(res.body.error, res.text);
    }
    assert.deepEqual(await get(), defaults);

    const updated = await updateBook(svc, ws.key, book.randomId, { reading_direction: 'rtl', page_layout: 'single', autoplay_interval: 7 });
    assert.equal(updated.settings.reading_direction, 'rtl');
    assert.equal(updated.settings.page_layout, 'single');
    assert.equal(updated.settings.autoplay_interval, 7);
    const data = await readerData();
    assert.equal(data.dir, 'rtl');
    assert.equal(data.layout, 'single');
    assert.equal(data.auto, 7);
    assert.match(await (await fetch(book.url)).text(), /<option value="7" selected>7 s<\/option>/);

    // Bulk settings read them back in the summary and write them like PUT does.
    const summary = await svc.request('POST', '/v1/books/bulk-settings/summary', { key: ws.key, body: { book_ids: [book.randomId] } });
    assert.equal(summary.status, 200, summary.text);
    assert.equal(summary.body.data.settings.common.reading_direction, 'rtl');
    assert.equal(summary.body.data.settings.common.autoplay_interval, 7);
    const bad = await svc.request('POST', '/v1/books/bulk-settings/batches', {
      key: ws.key, body: { books: [{ id: book.randomId, settings_revision: summary.body.data.books[0].settings_revision }], settings: { reading_direction: 'sideways' } },
    });
    assert.equal(bad.status, 422, bad.text);
    const created = await svc.request('POST', '/v1/books/bulk-settings/batches', {
      key: ws.key,
      body: { books: [{ id: book.randomId, settings_revision: summary.body.data.books[0].settings_revision }], settings: { reading_direction: 'ltr', page_layout: 'double', autoplay_interval: null } },
    });
    assert.equal(created.status, 202, created.text);
    const batch = await eventually(async () => {
      const res = await svc.request('GET', `/v1/books/bulk-settings/batches/${created.body.data.id}`, { key: ws.key });
      return res.body?.data?.status === 'completed' && res.body.data.finished_at ? res.body.data : null;
    }, { timeoutMs: 60_000, intervalMs: 100 });
    assert.equal(batch.items[0].status, 'succeeded', JSON.stringify(batch.items[0]));
    const after = await get();
    assert.equal(after.reading_direction, 'ltr');
    assert.equal(after.page_layout, 'double');
    assert.equal(after.autoplay_interval, null);
    const back = await readerData();
    assert.equal(back.dir, undefined);
    assert.equal(back.layout, 'double');
    assert.equal(back.auto, undefined);
    await updateBook(svc, ws.key, book.randomId, { page_layout: 'auto' });
  });
});
