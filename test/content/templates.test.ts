import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { startService, waitForBatch, type TestService } from '../helpers.ts';
import { startImageServer, type ImageServer } from './content-server.ts';

describe('templates and create-from-template', () => {
  let svc: TestService;
  let key: string;
  let images: ImageServer;
  before(async () => {
    images = await startImageServer();
    svc = await startService({ env: { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' } });
    key = (await svc.workspace()).key;
  });
  after(async () => {
    await svc.stop();
    await images.close();
  });

  it('lists templates with generated thumbnails, typed ids and defaults', async () => {
    const res = await svc.request('GET', '/v1/templates', { key });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.meta, { default_template_id: '1', default_template_source: 'built_in' });
    assert.ok(res.body.data.length >= 5);
    for (const template of res.body.data) {
      assert.match(template.id, /^[1-9]\d*$/);
      const thumb = await fetch(template.thumbnails.small);
      assert.equal(thumb.status, 200, template.thumbnails.small);
      const meta = await sharp(Buffer.from(await thumb.arrayBuffer())).stats();
      // A real render: not one flat colour.
      assert.ok(meta.channels.some((c) => c.stdev > 10), `thumbnail of ${template.id} is blank`);
    }
    const posts = await svc.request('GET', '/v1/templates', { key, query: { type: 'posts' } });
    assert.ok(posts.body.data.every((t: { type: string }) => t.type === 'posts'));
    assert.equal(posts.body.meta.default_template_id, '5');
    assert.equal((await svc.request('GET', '/v1/templates', { key, query: { type: 'x'.repeat(65) } })).status, 422);
  });

  it('makes a book of posts with HTML: sanitised, laid out, searchable, with links and outline', async () => {
    const content = Array.from({ length: 3 }, (_, i) => ({
      id: `post-${i}`,
      title: `Field notes ${i + 1}: spring planting`,
      author: 'Ann Example',
      date: '2026-03-0' + (i + 1),
      categories: ['Garden'],
      url: `https://blog.example/posts/${i}`,
      image: `${images.url}/img/${i}.jpg`,
      content: `<h2>Soil first</h2><p>Compost keeps the beds alive; marker${i}zebra.</p><script>document.title='pwned'</script><img src="javascript:alert(1)"><ul><li>Rake</li><li>Sow</li></ul><p onclick="alert(1)">Water daily.</p><img src="${images.url}/missing.jpg">`,
    }));
    const res = await svc.request('POST', '/v1/books/create-from-template', { key, body: { source: 'wordpress', source_type: 'posts', content, metadata: { site_name: 'Garden blog', site_url: 'https://blog.example' }, status: 'publish' } });
    assert.equal(res.status, 201, res.text);
    const book = res.body.data.book;
    assert.equal(book.page_images_status, 'processing');
    assert.equal(book.name, 'Garden blog');
    const batch = await waitForBatch(svc, key, book.batch_id);
    assert.equal(batch.status, 'completed', JSON.stringify(batch.error));
    assert.equal(batch.books[0].page_images_status, 'ready');
    assert.ok(batch.books[0].page_count >= 3);
    assert.equal(batch.warnings.length, 1, JSON.stringify(batch.warnings));
    assert.equal(batch.warnings[0].code, 'image_unavailable');
    assert.match(batch.warnings[0].message, /missing\.jpg.*HTTP 404.*placeholder/);

    const pages = await svc.request('GET', `/v1/books/${book.random_id}/pages`, { key });
    const text = pages.body.data.map((p: { text: Array<{ text: string }> }) => p.text.map((t) => t.text).join(' ')).join('\n');
    for (let i = 0; i < 3; i++) assert.ok(text.includes(`marker${i}zebra`), `post ${i} text is in the text layer`);
    assert.ok(text.includes('Soil first') && text.includes('Rake'));
    assert.ok(!text.includes('pwned') && !text.includes('alert'), 'scripts are dropped, not drawn');
    const urls = pages.body.data.flatMap((p: { links: Array<{ url?: string }> }) => p.links.map((l) => l.url));
    assert.ok(urls.includes('https://blog.example/posts/2'), `title links: ${urls}`);

    // The PDF's outline (one entry per post) becomes the reader's table of contents.
    const html = await (await fetch(`${svc.url}/read/${book.random_id}`)).text();
    const toc = /<nav class="toc"[^>]*>([\s\S]*?)<\/nav>/.exec(html)?.[1] ?? '';
    for (let i = 0; i < 3; i++) assert.ok(toc.includes(`Field notes ${i + 1}: spring planting`), `outline entry ${i + 1}: ${toc.slice(0, 300)}`);

    const search = await fetch(`${svc.url}/read/${book.random_id}/search?q=marker1zebra`);
    assert.equal(search.status, 200);
    const found = await search.json() as { total: number; hits: Array<{ page: number }> };
    assert.ok(found.total >= 1, JSON.stringify(found));
  });

  it('makes a product book in a grid template and refuses a template that does not fit', async () => {
    const content = [
      { id: 'p1', title: 'Linen shirt', price: '49.00', currency: 'EUR', url: 'https://shop.example/p1', image: `${images.url}/img/7.jpg`, stock_status: 'instock' },
      { id: 'p2', title: '无线蓝牙耳机 Pro', price: '99.00', sale_price: '79.00', regular_price: '99.00', currency: 'EUR', url: 'https://shop.example/p2', image: `${images.url}/not-image.jpg` },
      { id: 'p3', title: 'سماعات لاسلكية', price: '59.00', currency: 'EUR', url: 'https://shop.example/p3' },
    ];
    const wrong = await svc.request('POST', '/v1/books/create-from-template', { key, body: { source: 'woocommerce', source_type: 'products', content, template_id: 5 } });
    assert.equal(wrong.status, 422);
    assert.match(wrong.body.error.details.template_id[0], /does not lay out products/);
    const missing = await svc.request('POST', '/v1/books/create-from-template', { key, body: { source: 'woocommerce', source_type: 'products', content, template_id: 99 } });
    assert.equal(missing.status, 422);

    const res = await svc.request('POST', '/v1/books/create-from-template', { key, body: { source: 'woocommerce', source_type: 'products', content, template_id: 3, title: 'Summer', status: 'publish' } });
    assert.equal(res.status, 201, res.text);
    const batch = await waitForBatch(svc, key, res.body.data.book.batch_id);
    assert.equal(batch.status, 'completed', JSON.stringify(batch.error));
    assert.equal(batch.books[0].page_count, 2);
    assert.match(batch.warnings.map((w: { message: string }) => w.message).join('\n'), /not-image\.jpg.*not a readable image/);
    const pages = await svc.request('GET', `/v1/books/${res.body.data.book.random_id}/pages`, { key });
    const page = pages.body.data[1];
    const text = page.text.map((t: { text: string }) => t.text).join(' ');
    // Each Chinese character comes from one of Noto Sans SC's subset files, so a word can span several fonts (and text items).
    assert.ok(text.replace(/\s+/g, '').includes('无线蓝牙耳机'), `CJK text is real text: ${text}`);
    assert.ok(text.normalize('NFKC').includes('سماعات'.normalize('NFKC')), `Arabic text is real text: ${text}`);
    assert.ok(text.includes('€79.00'));
    // Searchable as a phrase: runs continued on the same line without a gap join without a space.
    const phrase = await fetch(`${svc.url}/read/${res.body.data.book.random_id}/search?q=${encodeURIComponent('蓝牙耳机')}`);
    assert.equal(phrase.status, 200);
    const hits = await phrase.json() as { total: number; hits: Array<{ page: number; rects?: unknown[] }> };
    assert.deepEqual(hits.hits.map((h) => h.page), [2], JSON.stringify(hits));
    const links = page.links.map((l: { url?: string }) => l.url);
    assert.deepEqual(['https://shop.example/p1', 'https://shop.example/p2', 'https://shop.example/p3'].filter((u) => links.includes(u)).length, 3);
  });

  it('validates the body at the spec limits', async () => {
    const one = { id: 'a', title: 'A' };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ source: 'wordpress', source_type: 'posts', content: Array.from({ length: 51 }, (_, i) => ({ id: String(i), title: 't' })) }, 'content'],
      [{ source: 'wordpress', source_type: 'posts', content: [] }, 'content'],
      [{ source: 'ghost', source_type: 'posts', content: [one] }, 'source'],
      [{ source: 'wordpress', source_type: 'videos', content: [one] }, 'source_type'],
      [{ source: 'wordpress', source_type: 'posts', content: [{ id: 'a', title: 'x'.repeat(501) }] }, 'content.0.title'],
      [{ source: 'wordpress', source_type: 'posts', content: [{ ...one, categories: Array.from({ length: 21 }, () => 'c') }] }, 'content.0.categories'],
      [{ source: 'wordpress', source_type: 'posts', content: [{ ...one, content: 'x'.repeat(50001) }] }, 'content.0.content'],
      [{ source: 'wordpress', source_type: 'posts', content: [{ ...one, image: 'not a url' }] }, 'content.0.image'],
      [{ source: 'wordpress', source_type: 'posts', content: [one], template_id: 0 }, 'template_id'],
      [{ source: 'wordpress', source_type: 'posts', content: [one], metadata: { currency: 'x'.repeat(11) } }, 'metadata.currency'],
    ];
    for (const [body, field] of cases) {
      const res = await svc.request('POST', '/v1/books/create-from-template', { key, body });
      assert.equal(res.status, 422, `${field}: ${res.text}`);
      assert.equal(res.body.error.type, 'ValidationException');
      assert.ok(Object.keys(res.body.error.details).some((k) => k.startsWith(field)), `${field} in ${JSON.stringify(res.body.error.details)}`);
    }
    const exactly50 = await svc.request('POST', '/v1/books/create-from-template', { key, body: { source: 'wordpress', source_type: 'pages', content: Array.from({ length: 50 }, (_, i) => ({ id: String(i), title: `Page ${i}` })) } });
    assert.equal(exactly50.status, 201, exactly50.text);
    assert.equal((await svc.request('DELETE', `/v1/batches/${exactly50.body.data.book.batch_id}`, { key })).status, 200);
  });
});
