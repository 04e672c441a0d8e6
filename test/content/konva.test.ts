/** POST /books/konva (the editor book) and GET /books/{book}/konva through HTTP (issue 14). */
import assert from 'node:assert/strict';
import { crc32, deflateSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { startService, waitForBatch, type TestService } from '../helpers.ts';

/** A PNG whose header says width × height with almost no pixel data behind it: what a decompression bomb announces. */
function pngHeader(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.alloc(1024))), chunk('IEND', Buffer.alloc(0))]);
}

async function pageImage(format: 'png' | 'jpeg' | 'webp', text: string, width = 800, height = 1131): Promise<string> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#fdf6e3"/><rect x="60" y="60" width="${width - 120}" height="200" fill="#268bd2"/><text x="80" y="400" font-size="64" font-family="sans-serif" fill="#073642">${text}</text></svg>`;
  const image = sharp(Buffer.from(svg));
  const bytes = format === 'png' ? await image.png().toBuffer() : format === 'jpeg' ? await image.jpeg({ quality: 85 }).toBuffer() : await image.webp().toBuffer();
  return `data:image/${format};base64,${bytes.toString('base64')}`;
}

const canvas = (pages: number) => ({ width: 800, height: 1131, orientation: 'portrait', objects: Array.from({ length: pages }, (_, i) => [JSON.stringify({ className: 'Text', attrs: { text: `Page ${i + 1}`, x: 80, y: 340 } })]) });

describe('editor books (POST /books/konva)', () => {
  let svc: TestService;
  let key: string;
  before(async () => {
    svc = await startService({ env: { KONVA_BODY_LIMIT_BYTES: 3 * 1024 * 1024 } });
    key = (await svc.workspace()).key;
  });
  after(() => svc.stop());

  it('makes a book whose pages are the PNG, JPEG and WebP page images; keeps the canvas for re-editing', async () => {
    // A photographic page (noise does not compress) makes the body larger than the default 1 MiB JSON limit.
    const photo = await sharp({ create: { width: 700, height: 990, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } }).png().toBuffer();
    const body = {
      title: 'Editor brochure',
      canvas: canvas(4),
      page_images: [await pageImage('png', 'First'), await pageImage('jpeg', 'Second'), await pageImage('webp', 'Third'), `data:image/png;base64,${photo.toString('base64')}`],
      status: 'publish',
      thumbnail: await pageImage('png', 'Thumb', 200, 283),
      settings: { allow_fullscreen: false, flip_sound: true, animation_type: 'slide', eod_enabled: true, pdf_password: 'secret' },
    };
    assert.ok(JSON.stringify(body).length > 1.2 * 1024 * 1024, 'a body larger than the default JSON limit');
    const res = await svc.request('POST', '/v1/books/konva', { key, body });
    assert.equal(res.status, 201, res.text);
    const book = res.body.data.book;
    assert.equal(book.page_images_status, 'processing');
    assert.equal(book.settings.copyright_enabled, false);
    assert.equal(book.settings.fullscreen_enabled, false);
    assert.equal(book.settings.sound_enabled, true);
    assert.equal(book.settings.animation_type, 'slide');
    assert.equal(book.settings.eod_enabled, false, 'read-only: ignored');
    assert.equal(book.settings.has_pdf_password, true);
    const batch = await waitForBatch(svc, key, book.batch_id);
    assert.equal(batch.status, 'completed', JSON.stringify(batch.error));
    assert.equal(batch.books[0].page_count, 4);
    const pages = (await svc.request('GET', `/v1/books/${book.random_id}/pages`, { key })).body.data;
    assert.equal(pages[0].width, 600, '800 px at 0.75 pt/px');
    assert.equal(pages[0].height, 1131 * 0.75);
    // The image is the page: its colours come through the conversion.
    const rendered = await sharp(Buffer.from(await (await fetch(pages[1].images[0].url)).arrayBuffer())).extract({ left: 4, top: 4, width: 4, height: 4 }).resize(1, 1).raw().toBuffer();
    assert.ok(Math.abs(rendered[0]! - 0xfd) < 12 && Math.abs(rendered[2]! - 0xe3) < 12, `page background ${[...rendered]}`);

    const stored = await svc.request('GET', `/v1/books/${book.random_id}/konva`, { key });
    assert.equal(stored.status, 200);
    assert.deepEqual(stored.body.data.canvas, body.canvas);
    const download = await fetch(`${svc.url}/read/${book.random_id}/download`);
    assert.equal(download.status, 404, 'no PDF download for an editor book');

    const upload = await svc.request('POST', '/v1/books/create-from-template', { key, body: { source: 'wordpress', source_type: 'posts', content: [{ id: '1', title: 'Not an editor book' }] } });
    assert.equal((await svc.request('GET', `/v1/books/${upload.body.data.book.random_id}/konva`, { key })).status, 404);
    const other = await svc.workspace();
    assert.equal((await svc.request('GET', `/v1/books/${book.random_id}/konva`, { key: other.key })).status, 404);
  });

  it('validates at every limit: canvas, objects, page images, data URLs, pixels, body size', async () => {
    const png = await pageImage('png', 'x', 100, 100);
    const base = { title: 'T', canvas: canvas(1), page_images: [png] };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...base, canvas: { ...base.canvas, width: 10001 } }, 'canvas.width'],
      [{ ...base, canvas: { ...base.canvas, height: 0 } }, 'canvas.height'],
      [{ ...base, canvas: { ...base.canvas, orientation: 'square' } }, 'canvas.orientation'],
      [{ ...base, canvas: { ...base.canvas, objects: [] } }, 'canvas.objects'],
      [{ ...base, canvas: { ...base.canvas, objects: Array.from({ length: 251 }, () => []) } }, 'canvas.objects'],
      [{ ...base, page_images: [] }, 'page_images'],
      [{ ...base, page_images: Array.from({ length: 251 }, () => 'data:image/png;base64,') }, 'page_images'],
      [{ ...base, page_images: ['data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=='] }, 'page_images.0'],
      [{ ...base, page_images: ['data:image/svg+xml;base64,PHN2Zy8+'] }, 'page_images.0'],
      [{ ...base, page_images: [`data:image/png;base64,${Buffer.from('not an image at all').toString('base64')}`] }, 'page_images.0'],
      [{ ...base, page_images: [png.replace('data:image/png', 'data:image/jpeg')] }, 'page_images.0'],
      [{ ...base, page_images: [png, `data:image/png;base64,${pngHeader(40_000, 40_000).toString('base64')}`] }, 'page_images.1'],
      [{ ...base, title: 'x'.repeat(256) }, 'title'],
      [{ ...base, status: 'schedule' }, 'status'],
      [{ ...base, settings: { background: 'x'.repeat(2049) } }, 'settings.background'],
      [{ ...base, thumbnail: 'data:text/plain;base64,aGk=' }, 'thumbnail'],
    ];
    for (const [body, field] of cases) {
      const res = await svc.request('POST', '/v1/books/konva', { key, body });
      assert.equal(res.status, 422, `${field}: ${res.text.slice(0, 300)}`);
      assert.equal(res.body.error.type, 'ValidationException');
      assert.ok(Object.keys(res.body.error.details).some((k) => k.startsWith(field)), `${field} in ${JSON.stringify(res.body.error.details)}`);
    }
    const bomb = await svc.request('POST', '/v1/books/konva', { key, body: { ...base, page_images: [`data:image/png;base64,${pngHeader(40_000, 40_000).toString('base64')}`] } });
    assert.match(bomb.body.error.details['page_images.0'][0], /40000 × 40000 pixels/);

    // One entry over 22,020,096 characters, and a body over KONVA_BODY_LIMIT_BYTES (3 MiB here): 413 with the envelope.
    const huge = await fetch(`${svc.url}/v1/books/konva`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...base, page_images: [`data:image/png;base64,${'A'.repeat(4 * 1024 * 1024)}`] }),
    });
    assert.equal(huge.status, 413);
    const envelope = await huge.json() as { error: { type: string; message: string } };
    assert.equal(envelope.error.type, 'PayloadTooLargeException');
    // Other routes keep the default JSON limit (1 MiB).
    const elsewhere = await svc.request('POST', '/v1/books/create-from-template', { key, body: { source: 'wordpress', source_type: 'posts', content: [{ id: '1', title: 't', content: 'x'.repeat(1_200_000) }] } });
    assert.equal(elsewhere.status, 413);
  });
});
