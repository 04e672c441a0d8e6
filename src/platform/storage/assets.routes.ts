/**
 * Public page images, served from storage with immutable caching: their keys
 * carry a rendition id that changes whenever pages are rendered again, so a
 * URL never changes meaning (brand logos likewise: their key is a hash of
 * the bytes). Only page images and logos are served here; originals and
 * PDFs go through the reader, which applies the book's download rules.
 */
import type { FastifyPluginAsync } from 'fastify';
import { ERRORS } from '../errors.ts';
import { buffer } from 'node:stream/consumers';
import type { Storage } from './storage.ts';
import type { ClientRateLimiter } from '../http/client-rate-limit.ts';

/** Assets made on their first request (page renditions, books/page-renditions.service.ts). */
export interface OnDemandAssets {
  handles(key: string): boolean;
  /** The asset's bytes once made and stored; null when nothing should be there. May throw a 429 when busy. */
  make(key: string, admit?: () => Promise<void>): Promise<{ body: Buffer; contentType: string } | null>;
}

export interface AssetsOptions {
  storage: Storage;
  /** Draws page renditions listed as on-demand on their first request (page-renditions.service.ts). */
  renditions?: OnDemandAssets;
  /** Per client (hashed address), drawn renditions a minute (the requests served from storage are not counted). */
  renditionLimit?: { limiter: ClientRateLimiter; perMinute: number };
}

/**
 * Assets up to this size are read whole and sent as one buffer. Streamed, a
 * file's read stream is still open when the last byte leaves, and clients
 * (browsers, CDNs, image loaders) often hang up the moment they hold
 * Content-Length bytes: Fastify then logged "stream closed prematurely" for
 * downloads that arrived whole. Page images and logos are far below it.
 */
const BUFFERED_ASSET_BYTES = 8 * 1024 * 1024;

/** Page images, brand logos (content-hashed keys, see brand.service.ts) and template thumbnails (versioned keys, template-thumbnails.ts); every part bounded. */
const PUBLIC_ASSET = /^(books\/[A-Za-z0-9_-]{1,64}\/[A-Za-z0-9_-]{1,64}\/p\d{1,6}-w\d{1,5}\.(webp|jpeg)|brands\/\d{1,10}\/logo-[0-9a-f]{32}\.webp|templates\/v\d{1,4}\/\d{1,10}\/thumbnail-w\d{1,5}\.webp)$/;

export const assetsRoutes: FastifyPluginAsync<AssetsOptions> = async (app, { storage, renditions, renditionLimit }) => {
  app.get('/assets/*', {
    schema: { hide: true },
    config: { public: true, unlimited: true },
  }, async (request, reply) => {
    const key = (request.params as { '*': string })['*'];
    if (!PUBLIC_ASSET.test(key)) throw ERRORS.notFound('Asset');
    const object = await storage.get(key);
    if (!object) {
      if (!renditions?.handles(key)) throw ERRORS.notFound('Asset');
      const admit = renditionLimit
        ? async () => {
          const { limiter, perMinute } = renditionLimit;
          const wait = await limiter.hit([{ bucket: 'assets:rendition', max: perMinute, windowMs: 60_000, subject: limiter.clientKey(request.ip) }]);
          if (wait !== null) throw ERRORS.rateLimited(wait);
        }
        : undefined;
      const made = await renditions.make(key, admit);
      if (!made) throw ERRORS.notFound('Asset');
      return reply
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('content-type', made.contentType)
        .header('cross-origin-resource-policy', 'cross-origin')
        .send(made.body);
    }
    reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('content-type', object.info.contentType ?? 'application/octet-stream')
      .header('content-length', String(object.info.size))
      .header('cross-origin-resource-policy', 'cross-origin');
    if (object.info.size <= BUFFERED_ASSET_BYTES) {
      // A file deleted between its lookup and its read (an expired book version's, say) is missing, not an error.
      const body = await buffer(object.body).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw ERRORS.notFound('Asset');
        throw error;
      });
      return reply.send(body);
    }
    return reply.send(object.body);
  });
};
