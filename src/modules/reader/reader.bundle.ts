/**
 * The reader's browser code (client/main.ts) and styles (client/reader.css),
 * bundled and minified by esbuild once per process on first use, kept in
 * memory with gzip and brotli copies, and served under content-hashed names
 * so they can be cached forever.
 *
 * Run this file to print the bundle's sizes:  npm exec -- node src/modules/reader/reader.bundle.ts
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

export interface BundleFile {
  /** "reader.<hash>.js" */
  name: string;
  contentType: string;
  raw: Buffer;
  gzip: Buffer;
  br: Buffer;
}

export interface ReaderBundle {
  js: BundleFile;
  css: BundleFile;
  files: Map<string, BundleFile>;
}

const CLIENT_DIR = path.join(import.meta.dirname, 'client');

function file(kind: 'js' | 'css', text: string): BundleFile {
  const raw = Buffer.from(text);
  const hash = createHash('sha256').update(raw).digest('base64url').slice(0, 12);
  return {
    name: `reader.${hash}.${kind}`,
    contentType: kind === 'js' ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8',
    raw,
    gzip: gzipSync(raw, { level: 9 }),
    br: brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
  };
}

export async function buildReaderBundle(): Promise<ReaderBundle> {
  const result = await build({
    entryPoints: { reader: path.join(CLIENT_DIR, 'main.ts'), 'reader-style': path.join(CLIENT_DIR, 'reader.css') },
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    write: false,
    outdir: 'out',
    legalComments: 'none',
    logLevel: 'silent',
    charset: 'utf8',
  });
  const js = result.outputFiles.find((f) => f.path.endsWith('.js'));
  const css = result.outputFiles.find((f) => f.path.endsWith('.css'));
  if (!js || !css) throw new Error('The reader bundle is incomplete');
  const bundle = { js: file('js', js.text), css: file('css', css.text) };
  return { ...bundle, files: new Map([[bundle.js.name, bundle.js], [bundle.css.name, bundle.css]]) };
}

let cached: Promise<ReaderBundle> | null = null;

/** The bundle of this process, built on first call. */
export function readerBundle(): Promise<ReaderBundle> {
  cached ??= buildReaderBundle().catch((error: unknown) => {
    cached = null;
    throw error;
  });
  return cached;
}

export function bundleSizes(bundle: ReaderBundle) {
  const sum = (pick: (f: BundleFile) => number) => pick(bundle.js) + pick(bundle.css);
  return {
    js: { raw: bundle.js.raw.length, gzip: bundle.js.gzip.length, br: bundle.js.br.length },
    css: { raw: bundle.css.raw.length, gzip: bundle.css.gzip.length, br: bundle.css.br.length },
    total: { raw: sum((f) => f.raw.length), gzip: sum((f) => f.gzip.length), br: sum((f) => f.br.length) },
  };
}

/** The budget for the reader's own JS + CSS, gzipped. */
export const BUNDLE_BUDGET_GZIP = 60 * 1024;

if (import.meta.main) {
  const sizes = bundleSizes(await buildReaderBundle());
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  for (const [name, s] of Object.entries(sizes)) console.log(`${name.padEnd(5)} raw ${kb(s.raw).padStart(9)}  gzip ${kb(s.gzip).padStart(8)}  brotli ${kb(s.br).padStart(8)}`);
  console.log(`budget: ${kb(BUNDLE_BUDGET_GZIP)} gzipped — ${sizes.total.gzip <= BUNDLE_BUDGET_GZIP ? 'within' : 'OVER'}`);
  if (sizes.total.gzip > BUNDLE_BUDGET_GZIP) process.exitCode = 1;
}
