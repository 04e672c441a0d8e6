/**
 * Writes the OpenAPI document generated from the route definitions to
 * openapi.json (or, with --check, fails when the committed file is stale).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/platform/config/env.ts';
import { startRuntime } from '../src/runtime.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';

const target = path.resolve(import.meta.dirname, '../openapi.json');
const check = process.argv.includes('--check');

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-openapi-'));
// A fixed environment, so the document does not depend on the machine.
const config = loadConfig({}, { DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: 0, BOOTSTRAP_WORKSPACE: false, LOG_LEVEL: 'silent', PUBLIC_BASE_URL: 'http://localhost:3000' });
const runtime = await startRuntime(config, { api: true, worker: false, database: { kind: 'pglite', dataDir: 'memory' }, logger: pino({ level: 'silent' }) });
const document = `${JSON.stringify(runtime.app!.swagger(), null, 2)}\n`;
await runtime.stop();
await rm(dataDir, { recursive: true, force: true });

if (check) {
  const committed = await readFile(target, 'utf8').catch(() => '');
  if (committed !== document) {
    process.stderr.write('openapi.json is out of date: run "npm run openapi" and commit the result.\n');
    process.exit(1);
  }
  process.stdout.write('openapi.json is current.\n');
} else {
  await writeFile(target, document);
  const operations = Object.values((JSON.parse(document) as { paths: Record<string, object> }).paths).reduce((n, item) => n + Object.keys(item).length, 0);
  process.stdout.write(`Wrote ${path.relative(process.cwd(), target)} (${operations} operations).\n`);
}
