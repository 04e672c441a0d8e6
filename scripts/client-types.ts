/**
 * Generates the client's types (packages/client/src/schema.d.ts) from
 * openapi.json with openapi-typescript, or, with --check, generates them to a
 * temporary file and fails when they differ from the committed ones.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const root = path.resolve(import.meta.dirname, '..');
const target = path.join(root, 'packages/client/src/schema.d.ts');
const check = process.argv.includes('--check');

async function generate(output: string): Promise<void> {
  const cli = path.join(root, 'node_modules/.bin/openapi-typescript');
  await promisify(execFile)(cli, [path.join(root, 'openapi.json'), '-o', output], { cwd: root });
}

if (check) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-client-types-'));
  try {
    const fresh = path.join(dir, 'schema.d.ts');
    await generate(fresh);
    const [generated, committed] = await Promise.all([readFile(fresh, 'utf8'), readFile(target, 'utf8').catch(() => '')]);
    if (generated !== committed) {
      process.stderr.write('packages/client/src/schema.d.ts is out of date with openapi.json: run "npm run client:generate" and commit the result.\n');
      process.exitCode = 1;
    } else {
      process.stdout.write('packages/client/src/schema.d.ts is current.\n');
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
} else {
  await generate(target);
  process.stdout.write(`Wrote ${path.relative(process.cwd(), target)}.\n`);
}
