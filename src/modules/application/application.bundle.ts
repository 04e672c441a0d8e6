/**
 * The application's browser code (src/web: Preact screens, one entry
 * src/web/main.tsx importing src/web/app.css), bundled by esbuild once per
 * process on first use, like the reader's: minified, split into an entry
 * and one chunk per lazily loaded screen, content-hashed names, kept in
 * memory with gzip and brotli copies.
 *
 * The server imports nothing from src/web: esbuild reads it from disk.
 *
 * Run this file to print the sizes, the first route's above all:  npm run app:size
 */
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';

export interface AppAsset {
  /** "main-<hash>.js", "chunk-<hash>.js", "main-<hash>.css" */
  name: string;
  contentType: string;
  raw: Buffer;
  gzip: Buffer;
  br: Buffer;
}

export interface AppBundle {
  /** The entry script, loaded by the HTML shell. */
  entry: AppAsset;
  /** The one stylesheet. */
  css: AppAsset;
  /** Chunks the entry imports statically (preloaded by the HTML shell). */
  preload: AppAsset[];
  /** Every file by name, for /app/assets/<name>. */
  files: Map<string, AppAsset>;
  /** Each lazily loaded screen module (path under src/web) with every file it needs beyond the entry's. */
  lazy: Map<string, AppAsset[]>;
}

export const WEB_DIR = path.resolve(import.meta.dirname, '../../web');

function asset(name: string, bytes: Uint8Array): AppAsset {
  const raw = Buffer.from(bytes);
  return {
    name,
    contentType: name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8',
    raw,
    gzip: gzipSync(raw, { level: 9 }),
    br: brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
  };
}

/** The files an output needs through static imports, itself included. */
function staticClosure(metafile: Metafile, output: string, seen = new Set<string>()): Set<string> {
  if (seen.has(output)) return seen;
  seen.add(output);
  for (const imported of metafile.outputs[output]?.imports ?? []) {
    if (imported.kind === 'import-statement' && !imported.external) staticClosure(metafile, imported.path, seen);
  }
  return seen;
}

export async function buildAppBundle(): Promise<AppBundle> {
  const outdir = path.join(WEB_DIR, 'out');
  const result = await build({
    entryPoints: { main: path.join(WEB_DIR, 'main.tsx') },
    bundle: true,
    splitting: true,
    format: 'esm',
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    tsconfig: path.join(WEB_DIR, 'tsconfig.json'),
    write: false,
    metafile: true,
    outdir,
    absWorkingDir: path.resolve(WEB_DIR, '../..'),
    legalComments: 'none',
    logLevel: 'silent',
    charset: 'utf8',
  });
  const { metafile } = result;
  const relative = (file: string) => path.relative(path.resolve(WEB_DIR, '../..'), file);
  const files = new Map<string, AppAsset>();
  const byOutput = new Map<string, AppAsset>();
  for (const output of result.outputFiles) {
    if (output.path.endsWith('.map')) continue;
    const made = asset(path.basename(output.path), output.contents);
    files.set(made.name, made);
    byOutput.set(relative(output.path), made);
  }
  const outputs = Object.entries(metafile.outputs);
  const entryOutput = outputs.find(([output, o]) => o.entryPoint === 'src/web/main.tsx' && output.endsWith('.js'));
  const [entryPath, entryMeta] = entryOutput ?? [];
  if (!entryPath || !entryMeta?.cssBundle) throw new Error('The application bundle has no entry script or no stylesheet');
  const find = (output: string) => {
    const found = byOutput.get(output);
    if (!found) throw new Error(`The application bundle lacks ${output}`);
    return found;
  };
  const core = staticClosure(metafile, entryPath);
  const lazy = new Map<string, AppAsset[]>();
  for (const [output, meta] of outputs) {
    if (!meta.entryPoint || output === entryPath || output.endsWith('.css')) continue;
    const needs = [...staticClosure(metafile, output)].filter((o) => !core.has(o));
    lazy.set(path.relative('src/web', meta.entryPoint), needs.map(find));
  }
  return {
    entry: find(entryPath),
    css: find(entryMeta.cssBundle),
    preload: [...core].filter((o) => o !== entryPath).map(find),
    files,
    lazy,
  };
}

let cached: Promise<AppBundle> | null = null;

/** The bundle of this process, built on first call. */
export function appBundle(): Promise<AppBundle> {
  cached ??= buildAppBundle().catch((error: unknown) => {
    cached = null;
    throw error;
  });
  return cached;
}

/** The screen a newcomer lands on: /app sends a signed-out visitor to /app/sign-in. */
export const FIRST_ROUTE_MODULE = 'sign-in/sign-in.tsx';

/** Bytes of what a route needs: the entry, its static chunks, the stylesheet and the route's own chunks. */
export function routeSizes(bundle: AppBundle, module: string | null) {
  const assets = [bundle.entry, ...bundle.preload, bundle.css, ...(module ? bundle.lazy.get(module) ?? [] : [])];
  const sum = (pick: (a: AppAsset) => number) => assets.reduce((total, a) => total + pick(a), 0);
  return { files: assets.length, raw: sum((a) => a.raw.length), gzip: sum((a) => a.gzip.length), br: sum((a) => a.br.length) };
}

/** The budget for the first route (entry + stylesheet + sign-in screen), gzipped. */
export const FIRST_ROUTE_BUDGET_GZIP = 40 * 1024;

if (import.meta.main) {
  const bundle = await buildAppBundle();
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  const line = (label: string, s: ReturnType<typeof routeSizes>) =>
    console.log(`${label.padEnd(34)} ${String(s.files).padStart(2)} files  raw ${kb(s.raw).padStart(9)}  gzip ${kb(s.gzip).padStart(8)}  brotli ${kb(s.br).padStart(8)}`);
  const first = routeSizes(bundle, FIRST_ROUTE_MODULE);
  line(`first route (${FIRST_ROUTE_MODULE})`, first);
  line('entry + stylesheet', routeSizes(bundle, null));
  for (const module of [...bundle.lazy.keys()].sort()) if (module !== FIRST_ROUTE_MODULE) line(`  with ${module}`, routeSizes(bundle, module));
  console.log(`first route: ${kb(first.gzip)} gzip (budget ${kb(FIRST_ROUTE_BUDGET_GZIP)}: ${first.gzip <= FIRST_ROUTE_BUDGET_GZIP ? 'within' : 'OVER'})`);
  if (first.gzip > FIRST_ROUTE_BUDGET_GZIP) process.exitCode = 1;
}
