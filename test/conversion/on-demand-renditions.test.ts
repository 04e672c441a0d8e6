/**
 * Renditions drawn on their first request (books/page-renditions.service.ts):
 * the 2048 px image a PDF conversion leaves out, and the reader's zoom sizes,
 * through the real service: listed on the page, drawn from the stored source
 * on the first GET, stored, served from storage after; an uploaded image's go
 * up to its own size; unknown keys stay 404 and drawing is rate-limited.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import sharp from 'sharp';
import { bookPages, books } from '../../src/modules/books/books.tables.ts';
import { makePdf, makePng } from '../documents.ts';
import { startService, uploadFile, waitForBatch, type TestService } from '../helpers.ts';
import { startS3, type S3Server } from '../scale/cluster.ts';

describe('page renditions drawn on demand', () => {
  let svc: TestService;
  let key: string;
  before(async () => {
    svc = await startService({ env: { RENDITIONS_PER_MINUTE: 4 } });
    key = (await svc.workspace()).key;
  });
  after(() => svc.stop());

  async function convert(file: Buffer, filename: string) {
    const res = await uploadFile(svc, key, file, filename, { status: 'publish' });
    assert.equal(res.status, 202, res.text);
    const batch = await waitForBatch(svc, key, res.body.data.batch_id);
    assert.equal(batch.status, 'completed', JSON.stringify(batch.error));
    return batch.books[0].random_id as string;
  }

  async function storedImages(randomId: string, page = 1) {
    const db = svc.runtime.database.db;
    const [row] = await db.select({ images: bookPages.images }).from(bookPages).innerJoin(books, eq(books.id, bookPages.bookId)).where(eq(books.randomId, randomId));
    assert.ok(row, `page ${page}`);
    return row.images;
  }

  it('lists 2048 px without making it, draws it on the first request from the stored PDF, then serves it from storage', async () => {
    const randomId = await convert(await makePdf({ pages: 2 }), 'Lazy.pdf');
    const images = await storedImages(randomId);
    const lazy = images.find((i) => i.width === 2048)!;
    assert.equal(lazy.onDemand, 'width');
    assert.equal(await svc.runtime.storage.get(lazy.key), null, 'the conversion did not make the 2048 px image');

    const pages = await svc.request('GET', `/v1/books/${randomId}/pages`, { key });
    const listed = pages.body.data[0].images as { width: number; height: number; url: string }[];
    assert.deepEqual(listed.map((i) => i.width), [320, 1024, 2048], 'zoom renditions are the reader\'s, not the API\'s');
    assert.equal(listed[2]!.height, Math.round((2048 * 842) / 595));
    assert.equal(listed[2]!.url, `${svc.url}/assets/${lazy.key}`);

    const first = await fetch(listed[2]!.url);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('content-type'), 'image/webp');
    assert.equal(await widthOf(first), 2048);
    const stored = await svc.runtime.storage.get(lazy.key);
    assert.ok(stored, 'stored after the first request');
    stored.body.destroy();
    const again = await fetch(listed[2]!.url);
    assert.equal(again.status, 200);
    assert.equal(await widthOf(again), 2048);
  });

  it('draws a zoom rendition (5120 px) of a PDF page; a width the page does not list is 404', async () => {
    const randomId = await convert(await makePdf({ pages: 1 }), 'Zoom.pdf');
    const images = await storedImages(randomId);
    const zoom = images.filter((i) => i.onDemand === 'zoom').map((i) => i.width);
    assert.deepEqual(zoom, [3072, 4096, 5120]);
    const largest = images.at(-1)!;
    const res = await fetch(`${svc.url}/assets/${largest.key}`);
    assert.equal(res.status, 200);
    assert.equal(await widthOf(res), 5120);
    const unlisted = largest.key.replace('-w5120.', '-w6000.');
    assert.equal((await fetch(`${svc.url}/assets/${unlisted}`)).status, 404);
    const otherBook = largest.key.replace(randomId, 'A'.repeat(22));
    assert.equal((await fetch(`${svc.url}/assets/${otherBook}`)).status, 404);
  });

  it('an uploaded image\'s renditions go up to its own size, not beyond', async () => {
    const randomId = await convert(await makePng(2600, 1800), 'photo.png');
    const images = await storedImages(randomId);
    assert.deepEqual(images.map((i) => [i.width, i.onDemand ?? null]), [[320, null], [1024, null], [2048, null], [2600, 'zoom']]);
    const res = await fetch(`${svc.url}/assets/${images.at(-1)!.key}`);
    assert.equal(res.status, 200);
    const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    assert.deepEqual([meta.width, meta.height], [2600, 1800]);
  });

  it('limits the drawings per client address (429 with Retry-After), not the stored images', async () => {
    const randomId = await convert(await makePdf({ pages: 3 }), 'Limited.pdf');
    const db = svc.runtime.database.db;
    const rows = await db.select({ images: bookPages.images }).from(bookPages).innerJoin(books, eq(books.id, bookPages.bookId)).where(eq(books.randomId, randomId));
    const keys = rows.flatMap((r) => r.images.filter((i) => i.onDemand).map((i) => i.key));
    // All at once, so most fall in one rate-limit window whenever the minute turns.
    const answers = await Promise.all(keys.map(async (k) => {
      const res = await fetch(`${svc.url}/assets/${k}`);
      await res.arrayBuffer();
      return { status: res.status, retryAfter: Number(res.headers.get('retry-after')) };
    }));
    const statuses = answers.map((a) => a.status);
    assert.ok(statuses.includes(429) && statuses.includes(200), `statuses ${statuses}`);
    assert.ok(answers.filter((a) => a.status === 429).every((a) => a.retryAfter >= 1));
    // A stored page image is never limited.
    const stored = rows[0]!.images[0]!;
    assert.equal((await fetch(`${svc.url}/assets/${stored.key}`)).status, 200);
  });
});

describe('page renditions drawn on demand, with S3 storage and a bucket URL', () => {
  let s3: S3Server;
  let svc: TestService;
  let key: string;
  before(async () => {
    s3 = await startS3();
    svc = await startService({
      env: {
        S3_BUCKET: s3.bucket, S3_ENDPOINT: s3.endpoint, S3_REGION: 'us-east-1', S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER', S3_FORCE_PATH_STYLE: true,
        S3_PUBLIC_URL: `${s3.endpoint}/${s3.bucket}`,
      },
    });
    key = (await svc.workspace()).key;
  });
  after(async () => {
    await svc.stop();
    await s3.close();
  });

  it('points on-demand images at the service (the bucket has nothing yet), stores the drawing in the bucket, which serves it after', async () => {
    const res = await uploadFile(svc, key, await makePdf({ pages: 1 }), 'S3.pdf', { status: 'publish' });
    const batch = await waitForBatch(svc, key, res.body.data.batch_id);
    assert.equal(batch.status, 'completed', JSON.stringify(batch.error));
    const pages = await svc.request('GET', `/v1/books/${batch.books[0].random_id}/pages`, { key });
    const [small, , lazy] = pages.body.data[0].images as { width: number; url: string }[];
    assert.ok(small!.url.startsWith(s3.endpoint), `stored images come from the bucket: ${small!.url}`);
    assert.ok(lazy!.url.startsWith(`${svc.url}/assets/`), `the on-demand one from the service: ${lazy!.url}`);
    const objectKey = lazy!.url.slice(`${svc.url}/assets/`.length);
    assert.equal((await fetch(`${s3.endpoint}/${s3.bucket}/${objectKey}`)).status, 404, 'not in the bucket before its first request');
    const drawn = await fetch(lazy!.url);
    assert.equal(drawn.status, 200);
    assert.equal(await widthOf(drawn), 2048);
    const fromBucket = await fetch(`${s3.endpoint}/${s3.bucket}/${objectKey}`);
    assert.equal(fromBucket.status, 200, 'stored in the bucket');
    assert.equal(await widthOf(fromBucket), 2048);
  });
});

async function widthOf(res: Response): Promise<number | undefined> {
  return (await sharp(Buffer.from(await res.arrayBuffer())).metadata()).width;
}
