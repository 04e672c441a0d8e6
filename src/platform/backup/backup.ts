/**
 * `flipbook backup` and `flipbook restore`: the database and every stored file
 * in one directory, with a manifest of counts and SHA-256 checksums.
 *
 * The database is snapshotted first, then the files are copied: files written
 * after the snapshot may be included, but every file the snapshot refers to is
 * there. On PostgreSQL the snapshot is pg_dump's, run inside an exported
 * snapshot so the manifest's row counts are those of the dump; on PGlite the
 * service that holds the database dumps it (admin channel), or the CLI opens it
 * itself when no service runs. Files are read and written through the Storage
 * interface, so local directories and S3 buckets both work.
 *
 * Restore checks every checksum before it writes anything, and refuses a
 * deployment that already has tables or files.
 */
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, copyFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Config } from '../config/env.ts';
import { acquireDataDirLock } from '../db/data-dir-lock.ts';
import { countTables, loadPgliteSnapshot, USER_TABLES_SQL } from '../db/database.ts';
import { assertSafeKey, type Storage } from '../storage/storage.ts';

const run = promisify(execFile);

export const MANIFEST_FILE = 'manifest.json';
const DATABASE_FILES = { pglite: 'database.tar.gz', postgres: 'database.dump' } as const;
const SECRET_FILE = 'secret.key';

export interface Manifest {
  format: 'flipbook-backup';
  version: 1;
  created_at: string;
  database: { kind: 'pglite' | 'postgres'; file: string; bytes: number; sha256: string; rows: number; tables: Record<string, number> };
  files: { storage: 'local' | 's3'; count: number; bytes: number; entries: { key: string; bytes: number; sha256: string }[] };
  /** DATA_DIR/secret.key (it decrypts webhook secrets and signs reader sessions) when SECRET_KEY is not set. */
  secret_key: { file: string; sha256: string } | null;
  duration_ms: number;
}

export type Progress = (line: string) => void;

export class BackupError extends Error {
  override name = 'BackupError';
}

async function sha256File(file: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

async function isEmptyDirectory(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length === 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw error;
  }
}

export const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const sum = (tables: Record<string, number>) => Object.values(tables).reduce((a, b) => a + b, 0);

/** pg_dump inside an exported snapshot: the row counts are taken in the same snapshot. */
async function dumpPostgres(url: string, file: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('begin isolation level repeatable read read only');
    const snapshot = (await client.query<{ id: string }>('select pg_export_snapshot() as id')).rows[0]!.id;
    const tables = await countTables((text) => client.query(text));
    await run('pg_dump', ['--format=custom', '--no-owner', '--no-privileges', `--snapshot=${snapshot}`, `--file=${file}`, `--dbname=${url}`], { maxBuffer: 16 * 1024 * 1024 });
    await client.query('commit');
    return tables;
  } finally {
    await client.end();
  }
}

/** Copies every stored object into DIR/files, hashing as it goes. */
async function copyFilesOut(storage: Storage, dir: string, progress: Progress): Promise<Manifest['files']> {
  const keys = await storage.list('');
  progress(`Files: ${keys.length} to copy from ${storage.kind} storage…`);
  const entries: Manifest['files']['entries'] = [];
  let bytes = 0;
  let lastReport = Date.now();
  for (const key of keys) {
    const object = await storage.get(key);
    if (!object) continue; // deleted since it was listed
    const target = path.join(dir, 'files', key);
    await mkdir(path.dirname(target), { recursive: true });
    const hash = createHash('sha256');
    let size = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    await pipeline(object.body, tap, createWriteStream(target));
    entries.push({ key, bytes: size, sha256: hash.digest('hex') });
    bytes += size;
    if (Date.now() - lastReport > 1000) {
      lastReport = Date.now();
      progress(`Files: ${entries.length}/${keys.length} (${mb(bytes)})`);
    }
  }
  progress(`Files: ${entries.length} copied (${mb(bytes)}).`);
  return { storage: storage.kind, count: entries.length, bytes, entries };
}

export interface BackupOptions {
  config: Readonly<Config>;
  storage: Storage;
  to: string;
  progress: Progress;
  /** PGlite: writes the snapshot tarball to the given absolute path and returns the row counts (the service, or the CLI itself). */
  dumpEmbedded: (file: string) => Promise<Record<string, number>>;
}

export async function backup({ config, storage, to, progress, dumpEmbedded }: BackupOptions): Promise<Manifest> {
  const started = Date.now();
  const dir = path.resolve(to);
  if (!(await isEmptyDirectory(dir))) throw new BackupError(`${dir} is not empty: back up into a new or empty directory.`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700); // the backup holds every reader's data and the secret key

  const kind = config.database.kind;
  const databaseFile = path.join(dir, DATABASE_FILES[kind]);
  progress(`Database: snapshot of ${kind === 'postgres' ? 'PostgreSQL (pg_dump)' : 'the embedded database'}…`);
  const tables = kind === 'postgres' ? await dumpPostgres(config.database.url, databaseFile) : await dumpEmbedded(databaseFile);
  await chmod(databaseFile, 0o600);
  const dumped = await sha256File(databaseFile);
  progress(`Database: ${Object.keys(tables).length} tables, ${sum(tables)} rows, ${mb(dumped.bytes)}.`);

  const files = await copyFilesOut(storage, dir, progress);

  let secretKey: Manifest['secret_key'] = null;
  if (!config.SECRET_KEY) {
    const source = path.join(config.dataDir, SECRET_FILE);
    try {
      await copyFile(source, path.join(dir, SECRET_FILE));
      await chmod(path.join(dir, SECRET_FILE), 0o600);
      secretKey = { file: SECRET_FILE, sha256: (await sha256File(source)).sha256 };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }

  const manifest: Manifest = {
    format: 'flipbook-backup',
    version: 1,
    created_at: new Date(started).toISOString(),
    database: { kind, file: DATABASE_FILES[kind], bytes: dumped.bytes, sha256: dumped.sha256, rows: sum(tables), tables },
    files,
    secret_key: secretKey,
    duration_ms: Date.now() - started,
  };
  // Written last: a directory without a manifest is an unfinished backup.
  await writeFile(path.join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  progress(`Backup complete in ${((Date.now() - started) / 1000).toFixed(1)} s: ${dir}`);
  return manifest;
}

export async function readManifest(from: string): Promise<Manifest> {
  const dir = path.resolve(from);
  let raw: string;
  try {
    raw = await readFile(path.join(dir, MANIFEST_FILE), 'utf8');
  } catch {
    throw new BackupError(`${dir} has no ${MANIFEST_FILE}: not a flipbook backup, or an unfinished one.`);
  }
  const manifest = JSON.parse(raw) as Manifest;
  if (manifest.format !== 'flipbook-backup' || manifest.version !== 1) throw new BackupError(`${dir}/${MANIFEST_FILE} is not a flipbook backup manifest (version 1).`);
  return manifest;
}

/** Every checksum, before anything is written. */
async function verify(dir: string, manifest: Manifest, progress: Progress): Promise<void> {
  progress('Checking checksums…');
  const problems: string[] = [];
  const check = async (name: string, file: string, sha256: string) => {
    try {
      if ((await sha256File(file)).sha256 !== sha256) problems.push(`${name}: checksum differs`);
    } catch {
      problems.push(`${name}: missing`);
    }
  };
  await check(manifest.database.file, path.join(dir, manifest.database.file), manifest.database.sha256);
  for (const entry of manifest.files.entries) {
    assertSafeKey(entry.key);
    await check(`files/${entry.key}`, path.join(dir, 'files', entry.key), entry.sha256);
  }
  if (manifest.secret_key) await check(manifest.secret_key.file, path.join(dir, manifest.secret_key.file), manifest.secret_key.sha256);
  if (problems.length > 0) throw new BackupError(`The backup is damaged; nothing was restored.\n  ${problems.slice(0, 20).join('\n  ')}${problems.length > 20 ? `\n  … and ${problems.length - 20} more` : ''}`);
  progress(`Checksums match: the database and ${manifest.files.count} files.`);
}

export interface RestoreOptions {
  config: Readonly<Config>;
  storage: Storage;
  from: string;
  progress: Progress;
}

/** PGlite: true when DATA_DIR already holds an embedded database. */
async function embeddedExists(dataDir: string): Promise<boolean> {
  return !(await isEmptyDirectory(dataDir));
}

/** PGlite: creates the database from the tarball, holding the data-directory lock, and returns its row counts. */
async function loadEmbedded(config: Readonly<Config>, tarball: Blob): Promise<Record<string, number>> {
  const release = acquireDataDirLock(config.dataDir);
  try {
    return await loadPgliteSnapshot((config.database as { dataDir: string }).dataDir, tarball);
  } finally {
    release();
  }
}

async function postgresTables(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ name: string }>(USER_TABLES_SQL)).rows.map((r) => r.name);
  } finally {
    await client.end();
  }
}

async function postgresCounts(url: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await countTables((text) => client.query(text));
  } finally {
    await client.end();
  }
}

export async function restore({ config, storage, from, progress }: RestoreOptions): Promise<Manifest> {
  const started = Date.now();
  const dir = path.resolve(from);
  const manifest = await readManifest(dir);
  const kind = config.database.kind;
  if (manifest.database.kind !== kind) {
    throw new BackupError(`This backup is of ${manifest.database.kind === 'postgres' ? 'PostgreSQL' : 'the embedded database (PGlite)'}; restore it with ${manifest.database.kind === 'postgres' ? 'DATABASE_URL set' : 'DATABASE_URL unset'}.`);
  }

  // The target must be empty: restore never merges into, or overwrites, a deployment.
  if (kind === 'postgres') {
    const existing = await postgresTables(config.database.url);
    if (existing.length > 0) throw new BackupError(`The target database already has ${existing.length} tables (${existing.slice(0, 3).join(', ')}…): restore needs an empty database. Create a new one (createdb) and point DATABASE_URL at it.`);
  } else if (await embeddedExists(config.database.dataDir)) {
    throw new BackupError(`${config.database.dataDir} already holds a database: restore needs an empty deployment. Point DATA_DIR at a new directory.`);
  }
  if ((await storage.list('')).length > 0) throw new BackupError(`The target ${storage.kind === 's3' ? 'bucket' : 'file storage'} already has files: restore needs an empty deployment.`);
  if (manifest.secret_key && !config.SECRET_KEY) {
    try {
      await stat(path.join(config.dataDir, SECRET_FILE));
      throw new BackupError(`${path.join(config.dataDir, SECRET_FILE)} already exists: restore needs an empty deployment.`);
    } catch (error) {
      if (error instanceof BackupError) throw error;
    }
  }

  await verify(dir, manifest, progress);

  progress(`Database: restoring ${manifest.database.rows} rows in ${Object.keys(manifest.database.tables).length} tables…`);
  let restored: Record<string, number>;
  if (kind === 'postgres') {
    await run('pg_restore', ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', `--dbname=${config.database.url}`, path.join(dir, manifest.database.file)], { maxBuffer: 16 * 1024 * 1024 });
    restored = await postgresCounts(config.database.url);
  } else {
    restored = await loadEmbedded(config, new Blob([await readFile(path.join(dir, manifest.database.file))]));
  }
  const differences = Object.entries(manifest.database.tables).filter(([table, n]) => restored[table] !== n).map(([table, n]) => `${table}: ${restored[table] ?? 'missing'} rows, backup has ${n}`);
  if (differences.length > 0) throw new BackupError(`The restored database differs from the manifest:\n  ${differences.join('\n  ')}`);
  progress(`Database: ${manifest.database.rows} rows restored; every table's count matches the manifest.`);

  progress(`Files: ${manifest.files.count} to copy into ${storage.kind} storage…`);
  let copied = 0;
  let lastReport = Date.now();
  for (const entry of manifest.files.entries) {
    await storage.put(entry.key, createReadStream(path.join(dir, 'files', entry.key)));
    copied++;
    if (Date.now() - lastReport > 1000) {
      lastReport = Date.now();
      progress(`Files: ${copied}/${manifest.files.count}`);
    }
  }
  progress(`Files: ${copied} copied (${mb(manifest.files.bytes)}).`);

  if (manifest.secret_key && !config.SECRET_KEY) {
    await mkdir(config.dataDir, { recursive: true });
    await copyFile(path.join(dir, manifest.secret_key.file), path.join(config.dataDir, SECRET_FILE));
    await chmod(path.join(config.dataDir, SECRET_FILE), 0o600);
    progress(`Secret key: restored to ${path.join(config.dataDir, SECRET_FILE)}.`);
  } else if (manifest.secret_key) {
    progress(`Secret key: SECRET_KEY is set, so the backup's ${manifest.secret_key.file} is not used; webhook secrets and reader sessions need the key they were made with.`);
  } else {
    progress('Secret key: none in the backup (SECRET_KEY was set, or DATA_DIR had no secret.key): start the service with the SECRET_KEY it ran with.');
  }
  progress(`Restore complete in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
  return manifest;
}
