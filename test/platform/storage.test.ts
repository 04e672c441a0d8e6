import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { after, before, describe, it } from 'node:test';
import { LocalStorage } from '../../src/platform/storage/local-storage.ts';

describe('local storage', () => {
  let root: string;
  let storage: LocalStorage;
  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'flipbook-storage-'));
    storage = new LocalStorage(root);
  });
  after(() => rm(root, { recursive: true, force: true }));

  it('streams a file in and out, lists and deletes by prefix', async () => {
    async function* chunks() {
      for (let i = 0; i < 100; i++) yield Buffer.from(`chunk ${i}\n`);
    }
    const stored = await storage.put('books/abc/source.txt', Readable.from(chunks()));
    assert.equal(stored.size, 890);
    await storage.put('books/abc/pages/1.webp', Buffer.from('img'));
    await storage.put('books/abd/pages/1.webp', Buffer.from('other'));
    const got = await storage.get('books/abc/source.txt');
    assert.ok(got);
    assert.match(await text(got.body), /^chunk 0\n[\s\S]*chunk 99\n$/);
    assert.deepEqual(await storage.list('books/abc/'), ['books/abc/pages/1.webp', 'books/abc/source.txt']);
    assert.equal(await storage.deletePrefix('books/abc/'), 2);
    assert.equal(await storage.get('books/abc/source.txt'), null);
    assert.deepEqual(await storage.list('books/'), ['books/abd/pages/1.webp']);
  });

  it('refuses keys that would leave the root', async () => {
    for (const key of ['../etc/passwd', '/abs', 'a/../../b', 'a//b', 'books/./x']) {
      await assert.rejects(storage.put(key, Buffer.from('x')), /Unsafe storage key/);
    }
  });

  it('leaves no partial file when the stream fails', async () => {
    const failing = new Readable({
      read() {
        this.destroy(new Error('client went away'));
      },
    });
    await assert.rejects(storage.put('books/broken/file.bin', failing), /went away/);
    assert.deepEqual(await storage.list('books/broken/'), []);
  });
});
