/**
 * Migrated databases for the test suite, made once and copied for every service a test starts.
 *
 * A fresh embedded database runs initdb (several seconds of WebAssembly) and then every migration; a scratch
 * PostgreSQL database runs every migration. The suite starts a service well over a hundred times a pass, so it starts
 * each one from a template instead: a tarball of a migrated PGlite data directory (kept in the temporary directory,
 * shared by the suite's processes) or a migrated PostgreSQL template database. Both are named by a fingerprint of the
 * migrations and of the PGlite and pg-boss versions, so a changed migration makes a new template. The migrations
 * themselves still run from empty in the tests that are about them (upgrade, readiness, backup) and whenever a
 * template is made.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { MIGRATIONS_DIR, openDatabase, type Database } from '../src/platform/db/database.ts';
import { JobQueue } from '../src/platform/jobs/queue.ts';

let fingerprintOnce: Promise<string> | null = null;
function fingerprint(): Promise<string> {
  fingerprintOnce ??= (async () => {
    const hash = createHash('sha256');
    for (const name of ['@electric-sql/pglite', 'pg-boss']) {
      const manifest = path.join(path.dirname(MIGRATIONS_DIR), 'node_modules', name, 'package.json');
      hash.update(`${name}@${(JSON.parse(await readFile(manifest, 'utf8')) as { version: string }).version}\n`);
    }
    const files = await readdir(MIGRATIONS_DIR, { recursive: true, withFileTypes: true });
    for (const file of files.filter((f) => f.isFile()).map((f) => path.join(f.parentPath, f.name)).sort()) {
      hash.update(path.relative(MIGRATIONS_DIR, file)).update(await readFile(file));
    }
    return hash.digest('hex').slice(0, 16);
  })();
  return fingerprintOnce;
}

/** Migrates a new database and installs pg-boss's schema, as a service's first start would. */
async function prepare(database: Database): Promise<void> {
  await database.migrate();
  const queue = new JobQueue({ database, log: pino({ level: 'silent' }), concurrency: 1 });
  queue.register([]);
  await queue.start({ work: false });
  await queue.stop(1000);
}

let pgliteTemplateOnce: Promise<Blob> | null = null;
/** The tarball of a migrated embedded database. */
export function pgliteTemplate(): Promise<Blob> {
  pgliteTemplateOnce ??= (async () => {
    const prefix = 'flipbook-test-pglite-';
    const file = path.join(os.tmpdir(), `${prefix}${await fingerprint()}.tar.gz`);
    try {
      return new Blob([await readFile(file)]);
    } catch {
      // not made yet
    }
    const database = await openDatabase({ kind: 'pglite', dataDir: 'memory' });
    try {
      await prepare(database);
      const { tarball } = await database.snapshot!();
      const bytes = Buffer.from(await tarball.arrayBuffer());
      // Another process may be making the same file: write aside, then rename (atomic), and drop older templates.
      const partial = `${file}.${process.pid}`;
      await writeFile(partial, bytes);
      await rename(partial, file);
      for (const stale of (await readdir(os.tmpdir())).filter((name) => name.startsWith(prefix) && path.join(os.tmpdir(), name) !== file && !name.includes('.tar.gz.'))) {
        await rm(path.join(os.tmpdir(), stale), { force: true });
      }
      return new Blob([bytes]);
    } finally {
      await database.close();
    }
  })();
  pgliteTemplateOnce.catch(() => {
    pgliteTemplateOnce = null;
  });
  return pgliteTemplateOnce;
}

/**
 * The name of a migrated template database on the server of `baseUrl`, made under an advisory lock when missing
 * (the suite's processes may ask at the same time).
 */
export async function postgresTemplate(baseUrl: string): Promise<string> {
  const prefix = 'flipbook_test_tpl_';
  const name = `${prefix}${await fingerprint()}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await admin.query('select pg_advisory_lock(hashtext($1))', [prefix]);
    const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (!rowCount) {
      // Another checkout (a worktree with other migrations) may be using its own template right now: only templates
      // made over a day ago are dropped. Each records when it was made in its comment.
      const stale = await admin.query<{ datname: string }>(
        `select datname from pg_database where datname like $1 and datname <> $2
           and coalesce(shobj_description(oid, 'pg_database'), '') < $3`,
        [`${prefix}%`, name, new Date(Date.now() - 86_400_000).toISOString()],
      );
      for (const { datname } of stale.rows) await admin.query(`drop database if exists ${datname} with (force)`).catch(() => undefined);
      await admin.query(`create database ${name}_building`);
      const url = new URL(baseUrl);
      url.pathname = `/${name}_building`;
      const database = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 2 });
      try {
        await prepare(database);
      } finally {
        await database.close();
      }
      // Renamed only when complete, so a failure part-way leaves no template that looks ready.
      await admin.query(`alter database ${name}_building rename to ${name}`);
      await admin.query(`comment on database ${name} is '${new Date().toISOString()}'`);
    }
    return name;
  } catch (error) {
    await admin.query(`drop database if exists ${name}_building with (force)`).catch(() => undefined);
    throw error;
  } finally {
    await admin.query('select pg_advisory_unlock(hashtext($1))', [prefix]).catch(() => undefined);
    await admin.end();
  }
}
