/**
 * `COPY (select …) TO STDOUT` on PostgreSQL, streamed (pg-copy-streams): the
 * server formats every row itself, so a large download skips node-postgres's
 * row parsing and any formatting in Node. The statement holds one pool
 * connection for the whole download, so at most `slots` run at once (the
 * caller falls back to its batched reads when none is free: the pool stays
 * for everyone else).
 *
 * COPY takes no bind parameters: `inlineSql` writes the values of a Drizzle
 * query into its text, each checked by type (integers, strings through
 * node-postgres's literal escaper), never concatenating raw input.
 *
 * The statement runs in its own transaction with `statement_timeout = 0` (a
 * long download is not a runaway query) and
 * `client_connection_check_interval`, so a backend still computing notices a
 * vanished client. Destroying the stream destroys the connection's socket
 * (the backend's next write fails and the query stops) and discards the
 * client from the pool.
 */
import { Readable } from 'node:stream';
import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';

const dialect = new PgDialect();

/** A value written into SQL text: integers as digits, strings (ISO times included) and Dates as escaped literals. */
export function sqlLiteral(value: unknown): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new TypeError(`not an integer for inline SQL: ${value}`);
    return String(value);
  }
  if (typeof value === 'string') return pg.escapeLiteral(value);
  if (value instanceof Date) return pg.escapeLiteral(value.toISOString());
  throw new TypeError(`no inline SQL form for a ${typeof value}`);
}

/**
 * The text of a Drizzle query with its parameters written in. `$n` is
 * replaced only outside quoted literals and identifiers, so a `$1` inside a
 * string of the query's own text is left alone.
 */
export function inlineSql(query: SQL): string {
  const { sql: text, params } = dialect.sqlToQuery(query);
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "'" || c === '"') {
      const end = text.indexOf(c, i + 1);
      if (end === -1) throw new Error('unterminated quote in SQL');
      out += text.slice(i, end + 1);
      i = end + 1; // a doubled quote is two adjacent quoted runs: copied alike
      continue;
    }
    if (c === '$') {
      const match = /^\$(\d+)/.exec(text.slice(i, i + 12));
      if (match) {
        const index = Number(match[1]) - 1;
        if (index < 0 || index >= params.length) throw new Error(`no parameter ${match[0]}`);
        out += sqlLiteral(params[index]);
        i += match[0].length;
        continue;
      }
    }
    out += c;
    i++;
  }
  return out;
}

export class CopyOut {
  private readonly pool: pg.Pool;
  private readonly slots: number;
  /** COPY statements streaming now. */
  running = 0;

  constructor(deps: { pool: pg.Pool; slots: number }) {
    this.pool = deps.pool;
    this.slots = deps.slots;
  }

  /**
   * Starts `COPY (<select>) TO STDOUT WITH (FORMAT csv)` and resolves with its
   * bytes once the first arrive (or the copy ended), so an error in the
   * statement rejects here, before any byte reaches a client. Null when every
   * slot is taken. Rows end with LF (PostgreSQL's), no header.
   */
  async csv(select: SQL): Promise<Readable | null> {
    if (this.running >= this.slots) return null;
    this.running++;
    let client: pg.PoolClient | null = null;
    let released = false;
    // A checked-out client has no error listener: a socket closed under it must not crash the process.
    const ignore = () => undefined;
    const release = (failed: boolean) => {
      if (released) return;
      released = true;
      this.running--;
      if (!client) return;
      if (failed) {
        // The backend is blocked writing to this socket or still computing: closing it stops the query.
        (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
        client.release(true);
      } else {
        client.removeListener('error', ignore);
        client.release();
      }
    };
    try {
      client = await this.pool.connect();
      client.on('error', ignore);
      await client.query("begin; set local statement_timeout = 0; set local client_connection_check_interval = '1s'");
      const copy = client.query(copyTo(`copy (${inlineSql(select)}) to stdout with (format csv)`));
      const chunks = copy[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
      const first = await chunks.next();
      const owner = client;
      let finished = first.done === true;
      const finish = async () => {
        try {
          await owner.query('commit');
        } catch (error) {
          release(true);
          throw error;
        }
        release(false);
      };
      if (finished) await finish();
      let pending: IteratorResult<Buffer> | null = first.done ? null : first;
      return new Readable({
        async read() {
          try {
            if (pending) {
              const chunk = pending.value as Buffer;
              pending = null;
              this.push(chunk);
              return;
            }
            if (finished) {
              this.push(null);
              return;
            }
            const next = await chunks.next();
            if (next.done) {
              finished = true;
              await finish();
              this.push(null);
              return;
            }
            this.push(next.value);
          } catch (error) {
            this.destroy(error as Error);
          }
        },
        destroy(error, callback) {
          if (!finished) {
            finished = true;
            release(true);
            copy.destroy();
          }
          callback(error);
        },
      });
    } catch (error) {
      release(true);
      throw error;
    }
  }
}
