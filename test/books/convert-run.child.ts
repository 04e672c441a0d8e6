/**
 * One conversion run in its own process, for test/books/readable-kill.test.ts
 * to kill with SIGKILL: `node convert-run.child.ts <database url> <storage
 * root> <batch id> <deps json>`. Prints `put <key>` once each image is stored.
 */
import pino from 'pino';
import { convertBook, type ConvertBookDeps } from '../../src/modules/books/convert-book.job.ts';
import { openDatabase } from '../../src/platform/db/database.ts';
import { LocalStorage } from '../../src/platform/storage/local-storage.ts';
import type { Storage } from '../../src/platform/storage/storage.ts';

const [url, root, batchId, depsJson] = process.argv.slice(2);
const database = await openDatabase({ kind: 'postgres', url: url!, poolSize: 3 });
const storage: Storage = new LocalStorage(root!);
const put = storage.put.bind(storage);
storage.put = async (key, body, options) => {
  const stored = await put(key, body, options);
  process.stdout.write(`put ${key}\n`);
  return stored;
};
const deps = JSON.parse(depsJson!) as Omit<ConvertBookDeps, 'db' | 'storage'>;
const outcome = await convertBook({ ...deps, db: database.db, storage }, batchId!, { jobId: 'child', signal: new AbortController().signal, log: pino({ level: 'silent' }), retryCount: 0 });
process.stdout.write(`outcome ${outcome.outcome}\n`);
process.exit(0);
