/**
 * The runtime size of @flipbook/client as a user's bundler would ship it:
 * packages/client/src/index.ts bundled with openapi-fetch by esbuild,
 * minified, for browsers (ES2020), and its size gzipped. The types cost nothing at run time.
 */
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { build } from 'esbuild';

const entry = path.resolve(import.meta.dirname, '../packages/client/src/index.ts');
const result = await build({ entryPoints: [entry], bundle: true, minify: true, format: 'esm', platform: 'browser', target: 'es2020', write: false, metafile: true, logLevel: 'warning' });
const code = result.outputFiles[0]!.contents;
const gzipped = gzipSync(code, { level: 9 }).length;
const inputs = Object.entries(result.metafile.outputs)[0]![1].inputs;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
for (const [file, { bytesInOutput }] of Object.entries(inputs).sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput)) {
  process.stdout.write(`  ${kb(bytesInOutput).padStart(9)}  ${path.relative(process.cwd(), path.resolve(file))}\n`);
}
process.stdout.write(`@flipbook/client: ${kb(code.length)} minified, ${kb(gzipped)} gzipped (${gzipped} bytes), openapi-fetch included.\n`);
