/**
 * One data layer over two engines: embedded PGlite (the default, nothing to
 * install) or a PostgreSQL server (DATABASE_URL). Both run the same SQL
 * migrations from ./drizzle and expose the same Drizzle database.
 */
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import * as schema from './schema.ts';
import { ConnectionTurns, type LaneStats } from './turns.ts';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
/** A transaction handle has the same query API as the database. */
export type DbOrTx = Db | Parameters<Parameters<Db['transaction']>[0]>[0];

/** The advisory lock a PostgreSQL process holds while it migrates (readiness reports it, migration-status.ts). */
export const MIGRATION_LOCK = 727274;
export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../drizzle');

/** Minimal SQL runner with positional parameters, used by pg-boss and raw statements. */
export interface SqlRunner {
  /** `name` makes it a prepared statement on PostgreSQL (parsed and planned once per connection): for statements run per request. */
  executeSql(text: string, values?: unknown[], options?: { name?: string }): Promise<{ rows: unknown[] }>;
}

export interface Database {
  kind: 'pglite' | 'postgres';
  db: Db;
  /** For pg-boss's `db` option (embedded mode) and health checks. */
  runner: SqlRunner;
  /** The connection string, when on PostgreSQL (pg-boss opens its own pool). */
  url?: string;
  /** PostgreSQL's pool, for work that holds a connection for long (COPY exports, copy-out.ts); null on PGlite. */
  pool: pg.Pool | null;
  migrate(): Promise<void>;
  ping(): Promise<void>;
  /**
   * Subscribes to a NOTIFY channel, in every process on the database. The
   * handler's second argument is false while the subscription is broken (a
   * lost connection): listeners must then stop trusting what they cached.
   */
  listen(channel: string, handler: (payload: string, healthy: boolean) => void): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
  /**
   * The same database for one kind of work that must progress beside the rest (the webhook loop): on PGlite its
   * operations take turns with everyone else's on the one connection (see turns.ts); on PostgreSQL it is `db`
   * (give such work its own pool instead).
   */
  lane(name: string): Db;
  /** PGlite: per lane, how long operations waited for the connection and ran. Null on PostgreSQL. */
  laneStats(): Record<string, LaneStats> | null;
  /**
   * PGlite: the rows of every table counted and the data directory dumped as a gzipped tarball, in one turn on
   * the connection, so no other statement runs between them (a consistent snapshot, backup.ts). Null on PostgreSQL,
   * which pg_dump snapshots instead.
   */
  snapshot: (() => Promise<{ tables: Record<string, number>; tarball: Blob }>) | null;
  close(): Promise<void>;
}

/** Every table of the application, pg-boss and Drizzle's journal (partitions counted in their parent). */
export const USER_TABLES_SQL = `select n.nspname || '.' || c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where c.relkind in ('r', 'p') and not c.relispartition and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\\_%'
  order by 1`;

/** Row counts of every table, through any query function (one client or a transaction, so one snapshot). */
export async function countTables(query: (text: string) => Promise<{ rows: unknown[] }>): Promise<Record<string, number>> {
  const tables: Record<string, number> = {};
  for (const { name } of (await query(USER_TABLES_SQL)).rows as { name: string }[]) {
    const quoted = name.split('.').map((part) => `"${part.replaceAll('"', '""')}"`).join('.');
    const { rows } = await query(`select count(*)::int as n from ${quoted}`);
    tables[name] = (rows[0] as { n: number }).n;
  }
  return tables;
}

/**
 * `template` starts an embedded database from a data directory's tarball (a snapshot) instead of running initdb:
 * the test suite starts each service from one migrated template, which takes a second where initdb takes several.
 */
export type DatabaseTarget =
  | { kind: 'pglite'; dataDir: string | 'memory'; template?: Blob }
  | { kind: 'postgres'; url: string; poolSize?: number };

export async function openDatabase(target: DatabaseTarget): Promise<Database> {
  return target.kind === 'pglite' ? openPglite(target.dataDir, target.template) : openPostgres(target.url, target.poolSize ?? 10);
}

/**
 * PGlite's two WebAssembly modules (the server and initdb) and its file-system
 * bundle, compiled and read once per process. By default every PGlite instance
 * compiles its own modules and drops them on close; a process that opens many
 * instances (the test suite: one per service it starts) then churns V8's Wasm
 * code space, which on Node 24 can abort the process in
 * ThreadIsolation::UnregisterWasmAllocation ("Check failed:
 * jit_page_->allocations_.erase(addr) == 1"; nodejs/node#64500,
 * electric-sql/pglite#1053). With the compiled modules kept for the life of the
 * process, their code is never freed and instances start faster.
 */
let pgliteArtifacts: Promise<{ pgliteWasmModule: WebAssembly.Module; initdbWasmModule: WebAssembly.Module; fsBundle: Blob }> | null = null;
function loadPgliteArtifacts() {
  pgliteArtifacts ??= (async () => {
    const dist = path.dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
    const [server, initdb, bundle] = await Promise.all(['pglite.wasm', 'initdb.wasm', 'pglite.data'].map((file) => readFile(path.join(dist, file))));
    const [pgliteWasmModule, initdbWasmModule] = await Promise.all([WebAssembly.compile(server!), WebAssembly.compile(initdb!)]);
    return { pgliteWasmModule, initdbWasmModule, fsBundle: new Blob([bundle!]) };
  })();
  pgliteArtifacts.catch(() => {
    pgliteArtifacts = null;
  });
  return pgliteArtifacts;
}

/** Creates an embedded database in `dataDir` from a snapshot's tarball (restore) and returns its row counts. */
export async function loadPgliteSnapshot(dataDir: string, tarball: Blob): Promise<Record<string, number>> {
  mkdirSync(dataDir, { recursive: true });
  const client = await PGlite.create(dataDir, { ...(await loadPgliteArtifacts()), loadDataDir: tarball });
  try {
    return await countTables((text) => client.query(text));
  } finally {
    await client.close();
  }
}

async function openPglite(dataDir: string, template?: Blob): Promise<Database> {
  if (dataDir !== 'memory') mkdirSync(dataDir, { recursive: true });
  const client = await PGlite.create(dataDir === 'memory' ? 'memory://' : dataDir, { ...(await loadPgliteArtifacts()), ...(template ? { loadDataDir: template } : {}) });
  const turns = new ConnectionTurns();
  // Drizzle calls only query() and transaction() on its client (and the transaction's own handle inside one).
  const laneClient = (lane: string) => ({
    query: (...args: Parameters<PGlite['query']>) => turns.run(lane, () => client.query(...args)),
    exec: (...args: Parameters<PGlite['exec']>) => turns.run(lane, () => client.exec(...args)),
    transaction: <T>(callback: Parameters<PGlite['transaction']>[0]) => turns.run(lane, () => client.transaction(callback) as Promise<T>),
  }) as unknown as PGlite;
  const lanes = new Map<string, Db>();
  const laneDb = (lane: string): Db => {
    let db = lanes.get(lane);
    if (!db) lanes.set(lane, (db = drizzlePglite({ client: laneClient(lane), schema }) as unknown as Db));
    return db;
  };
  const db = laneDb('default');
  const main = laneClient('default');
  const runner: SqlRunner = {
    async executeSql(text, values) {
      if (values && values.length > 0) return main.query(text, values as unknown[]);
      // PGlite's query() takes one statement; pg-boss sends multi-statement scripts.
      const results = await main.exec(text);
      return results[results.length - 1] ?? { rows: [] };
    },
  };
  return {
    kind: 'pglite',
    db,
    runner,
    pool: null,
    lane: laneDb,
    laneStats: () => turns.stats(),
    snapshot: () =>
      turns.run('default', async () => {
        const tables = await countTables((text) => client.query(text));
        await client.query('checkpoint');
        return { tables, tarball: await client.dumpDataDir('gzip') };
      }),
    async migrate() {
      await migratePglite(db as never, { migrationsFolder: MIGRATIONS_DIR });
    },
    async ping() {
      await main.query('select 1');
    },
    async listen(channel, handler) {
      const unsubscribe = await client.listen(channel, (payload) => handler(payload, true));
      return async () => {
        if (!client.closed) await unsubscribe();
      };
    },
    async notify(channel, payload) {
      await main.query('select pg_notify($1, $2)', [channel, payload]);
    },
    async close() {
      if (!client.closed) await client.close();
    },
  };
}

async function openPostgres(url: string, poolSize: number): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5000 });
  // An idle client that loses its server must not crash the process.
  pool.on('error', () => undefined);
  const db = drizzlePg({ client: pool, schema }) as unknown as Db;
  const runner: SqlRunner = {
    async executeSql(text, values, options) {
      if (options?.name) return pool.query({ name: options.name, text, values: values as unknown[] });
      return pool.query(text, values as unknown[]);
    },
  };
  return {
    kind: 'postgres',
    db,
    runner,
    url,
    pool,
    lane: () => db,
    laneStats: () => null,
    snapshot: null,
    async migrate() {
      // Several processes may start together: one migrates, the others wait for it.
      const client = await pool.connect();
      try {
        await client.query(`select pg_advisory_lock(${MIGRATION_LOCK})`);
        await migratePg(drizzlePg({ client, schema }), { migrationsFolder: MIGRATIONS_DIR });
      } finally {
        await client.query(`select pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => undefined);
        client.release();
      }
    },
    async ping() {
      await pool.query('select 1');
    },
    listen: (channel, handler) => listenPostgres(url, channel, handler),
    async notify(channel, payload) {
      await pool.query('select pg_notify($1, $2)', [channel, payload]);
    },
    async close() {
      if (!pool.ended) await pool.end();
    },
  };
}

/** A dedicated connection for LISTEN, reconnected when it drops. */
async function listenPostgres(url: string, channel: string, handler: (payload: string, healthy: boolean) => void): Promise<() => Promise<void>> {
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url, application_name: 'flipbook-listen' });
    next.on('notification', (message) => handler(message.payload ?? '', true));
    next.on('error', () => {
      handler('', false);
      next.end().catch(() => undefined);
      if (!closed) retry = setTimeout(() => void connect().catch(() => handler('', false)), 1000);
    });
    await next.connect();
    await next.query(`listen "${channel.replace(/"/g, '')}"`);
    client = next;
    handler('', true);
  };
  await connect();
  return async () => {
    closed = true;
    if (retry) clearTimeout(retry);
    await client?.end().catch(() => undefined);
  };
}

/** `now()` of the database, so every process agrees on time-based decisions. */
export async function databaseNow(db: DbOrTx): Promise<Date> {
  const result = await db.execute<{ now: Date | string }>(sql`select now() as now`);
  const value = (result as unknown as { rows: { now: Date | string }[] }).rows[0]!.now;
  return value instanceof Date ? value : new Date(value);
}
