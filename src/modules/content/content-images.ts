/**
 * Product and article images for the renderer, fetched through the one
 * SSRF-safe outbound client (public https only unless OUTBOUND_ALLOWED_HOSTS
 * says otherwise; no redirects; deadline and size cap), normalised by sharp to
 * a bounded JPEG (pdfkit embeds JPEG as is), and cached: per catalog in
 * storage (a re-render does not fetch again), per render in memory.
 *
 * An image that fails never fails the book: the renderer draws a placeholder
 * and the batch carries a warning naming the image and why.
 */
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import type { OutboundClient } from '../../platform/outbound/outbound-client.ts';
import type { Storage } from '../../platform/storage/storage.ts';
import type { StoredWarning } from '../books/books.tables.ts';

export const IMAGE_MAX_BYTES = 10 * 1024 * 1024;
export const IMAGE_TIMEOUT_MS = 10_000;
const MAX_INPUT_PIXELS = 50_000_000;
const MAX_SIDE = 1200;
const PARALLEL = 6;

async function streamToBuffer(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as unknown as Uint8Array));
  return Buffer.concat(chunks);
}

export class ImageSet {
  private readonly images = new Map<string, Buffer | null>();
  readonly warnings: StoredWarning[] = [];

  private readonly deps: { outbound: OutboundClient; storage: Storage; cachePrefix: string | null; signal?: AbortSignal };

  constructor(deps: { outbound: OutboundClient; storage: Storage; cachePrefix: string | null; signal?: AbortSignal }) {
    this.deps = deps;
  }

  /** The prepared image of a URL fetched by load(), or null (placeholder). */
  get = (url: string | null): Buffer | null => (url ? (this.images.get(url) ?? null) : null);

  /** Fetches every distinct URL, a few at a time. `label` names the image in warnings. */
  async load(requests: Array<{ url: string; label: string }>): Promise<void> {
    const pending = new Map<string, string>();
    for (const r of requests) if (r.url && !pending.has(r.url) && !this.images.has(r.url)) pending.set(r.url, r.label);
    const queue = [...pending.entries()];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const [url, label] = next;
        try {
          this.images.set(url, await this.fetchOne(url));
        } catch (error) {
          this.images.set(url, null);
          this.warnings.push({ code: 'image_unavailable', page: null, message: `${label}: the image ${url.slice(0, 300)} could not be used (${error instanceof Error ? error.message : String(error)}); a placeholder is shown.` });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL, queue.length) }, worker));
  }

  private cacheKey(url: string): string | null {
    return this.deps.cachePrefix ? `${this.deps.cachePrefix}${createHash('sha256').update(url).digest('hex')}.jpg` : null;
  }

  private async fetchOne(url: string): Promise<Buffer> {
    const key = this.cacheKey(url);
    if (key) {
      const cached = await this.deps.storage.get(key);
      if (cached) return streamToBuffer(cached.body);
    }
    const response = await this.deps.outbound.request(url, { timeoutMs: IMAGE_TIMEOUT_MS, maxResponseBytes: IMAGE_MAX_BYTES, signal: this.deps.signal, headers: { accept: 'image/*' } });
    if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
    let prepared: Buffer;
    try {
      prepared = await sharp(response.body, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' })
        .rotate()
        .resize({ width: MAX_SIDE, height: MAX_SIDE, fit: 'inside', withoutEnlargement: true })
        .flatten({ background: '#ffffff' })
        .jpeg({ quality: 82, mozjpeg: false })
        .toBuffer();
    } catch {
      throw new Error('not a readable image');
    }
    if (key) await this.deps.storage.put(key, prepared, { contentType: 'image/jpeg' });
    return prepared;
  }
}
