/**
 * The application (the screens in src/web), at /app:
 *
 *   GET /app, GET /app/*        one small HTML document that loads the bundle; the screens route in the browser
 *   GET /app/assets/:file       the bundle's scripts and stylesheet (content-hashed, immutable)
 *
 * Everything the screens do goes through the public /v1 API, so nothing here
 * knows about sessions: these routes are public and serve the same bytes to
 * everyone. The policy allows scripts and styles from this origin only (no
 * inline script, no inline style).
 *
 * They are exempt from the per-client limit of unauthenticated calls (10 a
 * minute by default), as the reader's pages are: one visit loads the page
 * and three or four assets, all from memory, and a person reloading twice
 * would be refused.
 */
import { brotliCompressSync, gzipSync } from 'node:zlib';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ERRORS } from '../../platform/errors.ts';
import { appBundle, type AppAsset, type AppBundle } from './application.bundle.ts';

const ROUTE = { schema: { hide: true }, config: { public: true, unlimited: true } } as const;

export const APP_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  // A book's page embeds the book's own reader (/read/…, this origin) beside its facts.
  "frame-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

type Encoding = 'br' | 'gzip' | null;

function encodingFor(request: FastifyRequest): Encoding {
  const accepted = String(request.headers['accept-encoding'] ?? '');
  if (/\bbr\b/.test(accepted)) return 'br';
  if (/\bgzip\b/.test(accepted)) return 'gzip';
  return null;
}

function send(request: FastifyRequest, reply: FastifyReply, file: Pick<AppAsset, 'raw' | 'gzip' | 'br'>): FastifyReply {
  const encoding = encodingFor(request);
  const encoded = encoding === 'br' ? file.br : encoding === 'gzip' ? file.gzip : null;
  reply.header('vary', 'accept-encoding');
  // A chunk of a few hundred bytes can come out larger compressed: then it goes as it is.
  if (!encoding || !encoded || encoded.length >= file.raw.length) return reply.send(file.raw);
  return reply.header('content-encoding', encoding).send(encoded);
}

/** The HTML shell: the same document for every /app address. */
export function renderShell(bundle: AppBundle): string {
  const url = (asset: AppAsset) => `/app/assets/${asset.name}`;
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="robots" content="noindex">',
    '<title>Flipbook</title>',
    `<link rel="stylesheet" href="${url(bundle.css)}">`,
    ...bundle.preload.map((chunk) => `<link rel="modulepreload" href="${url(chunk)}">`),
    `<script type="module" src="${url(bundle.entry)}"></script>`,
    '</head>',
    '<body>',
    '<div id="app"><noscript><main><h1>Flipbook</h1><p>The Flipbook application needs JavaScript. Please turn it on and reload this page.</p></main></noscript></div>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

let shell: { bundle: AppBundle; file: AppAsset } | null = null;

async function shellFile(): Promise<AppAsset> {
  const bundle = await appBundle();
  if (shell?.bundle !== bundle) {
    const raw = Buffer.from(renderShell(bundle));
    shell = { bundle, file: { name: 'index.html', contentType: 'text/html; charset=utf-8', raw, gzip: gzipSync(raw), br: brotliCompressSync(raw) } };
  }
  return shell.file;
}

export const applicationRoutes: FastifyPluginAsync = async (app) => {
  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    const file = await shellFile();
    reply
      .header('content-type', file.contentType)
      .header('content-security-policy', APP_CONTENT_SECURITY_POLICY)
      .header('cache-control', 'no-cache')
      .header('x-robots-tag', 'noindex');
    return send(request, reply, file);
  };
  app.get('/app', ROUTE, page);
  app.get('/app/*', ROUTE, page);

  app.get('/app/assets/:file', ROUTE, async (request, reply) => {
    const bundle = await appBundle();
    const file = bundle.files.get((request.params as { file: string }).file);
    if (!file) throw ERRORS.notFound('Asset');
    reply
      .header('content-type', file.contentType)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('cross-origin-resource-policy', 'same-origin');
    return send(request, reply, file);
  });
};
