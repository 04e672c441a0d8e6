import { createReadStream, createWriteStream } from 'node:fs';
import { access, constants, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomUUID } from 'node:crypto';
import { assertSafeKey, contentTypeFor, type ObjectInfo, type Storage, type StoredObject } from './storage.ts';

/** Files under a root directory. Writes go to a temporary name first, so a reader never sees half a file. */
export class LocalStorage implements Storage {
  readonly kind = 'local' as const;
  private readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  async check(): Promise<void> {
    // Created on the first write otherwise; a missing mount or a read-only directory fails here.
    await mkdir(this.root, { recursive: true });
    await access(this.root, constants.R_OK | constants.W_OK);
  }

  private pathOf(key: string): string {
    assertSafeKey(key);
    return path.join(this.root, key);
  }

  async put(key: string, body: Readable | Buffer): Promise<StoredObject> {
    const target = this.pathOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    const temporary = `${target}.${randomUUID()}.partial`;
    try {
      await pipeline(Buffer.isBuffer(body) ? Readable.from([body]) : body, createWriteStream(temporary));
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    const { size } = await stat(target);
    return { key, size };
  }

  async get(key: string): Promise<{ body: Readable; info: ObjectInfo } | null> {
    const info = await this.stat(key);
    if (!info) return null;
    return { body: createReadStream(this.pathOf(key)), info };
  }

  async stat(key: string): Promise<ObjectInfo | null> {
    try {
      const s = await stat(this.pathOf(key));
      return s.isFile() ? { size: s.size, contentType: contentTypeFor(key) } : null;
    } catch (error) {
      // A name too long for the file system, or a file where a folder is expected, cannot be a stored object either.
      if (['ENOENT', 'ENAMETOOLONG', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '')) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<number> {
    const keys = await this.list(prefix);
    const directory = this.pathOf(prefix.replace(/\/+$/, ''));
    // A writer may add a file while the tree is removed (ENOTEMPTY): rm retries.
    if (prefix.endsWith('/')) await rm(directory, { recursive: true, force: true, maxRetries: 10, retryDelay: 20 });
    else await Promise.all(keys.map((k) => this.delete(k)));
    return keys.length;
  }

  async list(prefix: string): Promise<string[]> {
    const base = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    const directory = base ? this.pathOf(base) : this.root;
    let entries: string[];
    try {
      entries = await readdir(directory, { recursive: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const keys: string[] = [];
    for (const entry of entries) {
      const key = (base ? `${base}/` : '') + entry.split(path.sep).join('/');
      if (!key.startsWith(prefix) || key.endsWith('.partial')) continue;
      if ((await this.stat(key)) !== null) keys.push(key);
    }
    return keys.sort();
  }

  directUrl(): string | null {
    return null;
  }
}
