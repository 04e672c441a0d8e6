/**
 * Idempotency-Key on writes (spec part 8), as Stripe does it:
 * - the first 2xx response is stored per workspace and key for IDEMPOTENCY_TTL_HOURS;
 *   a replay returns it with `X-Idempotent-Replay: true`;
 * - the same key with another method, path or body is refused (422);
 * - while the first request runs, a second one with the key gets 409 (the row
 *   inserted first is the lock, so two requests never both execute);
 * - failed responses are not stored: the key can be retried.
 */
import { createHash } from 'node:crypto';
import { and, eq, lt, or } from 'drizzle-orm';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.ts';
import { ERRORS } from '../errors.ts';
import { idempotencyKeys } from './http.tables.ts';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/**
 * While a request runs, its process renews its lock every RENEW_LOCK_MS; a lock
 * not renewed for ABANDONED_LOCK_MS belongs to a request that died with its
 * process (kill -9, a crash), and a retry may take the key over.
 */
const RENEW_LOCK_MS = 5_000;
const ABANDONED_LOCK_MS = 15_000;
const REPLAYED_HEADERS = ['content-type', 'location'];

interface PendingIdempotency {
  key: string;
  workspaceId: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: PendingIdempotency;
  }
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * What makes two requests "the same": method, path with query, and body.
 * Multipart bodies are streamed by their handler after this point, so an
 * upload is fingerprinted by its size instead of its bytes.
 */
function fingerprint(request: FastifyRequest): string {
  const contentType = request.headers['content-type'] ?? '';
  const body = contentType.startsWith('multipart/') ? `multipart:${request.headers['content-length'] ?? '?'}` : canonicalJson(request.body);
  return createHash('sha256').update(`${request.method} ${request.url}\n${body}`).digest('hex');
}

export function registerIdempotency(app: FastifyInstance, deps: { db: Db; ttlHours: number }): void {
  const { db, ttlHours } = deps;
  const held = new Map<string, PendingIdempotency>();
  const heldId = (p: PendingIdempotency) => `${p.workspaceId}\u0000${p.key}`;
  const renew = setInterval(() => {
    if (held.size === 0) return;
    const locks = [...held.values()];
    void db
      .update(idempotencyKeys)
      .set({ renewedAt: new Date() })
      .where(and(eq(idempotencyKeys.state, 'processing'), or(...locks.map((l) => and(eq(idempotencyKeys.workspaceId, l.workspaceId), eq(idempotencyKeys.key, l.key))))))
      .catch(() => undefined);
  }, RENEW_LOCK_MS);
  renew.unref();
  app.addHook('onClose', async () => clearInterval(renew));

  const claim = async (request: FastifyRequest, reply: FastifyReply) => {
    const key = request.headers['idempotency-key'];
    if (!WRITE_METHODS.has(request.method) || key === undefined || !request.auth) return;
    if (typeof key !== 'string' || key.length < 1 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
      throw ERRORS.validation({ 'Idempotency-Key': ['The Idempotency-Key header must be 1 to 255 visible ASCII characters.'] });
    }
    const workspaceId = request.auth.workspaceId;
    const print = fingerprint(request);
    const now = new Date();

    for (let attempt = 0; attempt < 2; attempt++) {
      const [claimed] = await db
        .insert(idempotencyKeys)
        .values({ workspaceId, key, fingerprint: print, state: 'processing', expiresAt: new Date(now.getTime() + ttlHours * 3_600_000) })
        .onConflictDoNothing()
        .returning({ key: idempotencyKeys.key });
      if (claimed) {
        request.idempotency = { key, workspaceId };
        held.set(heldId(request.idempotency), request.idempotency);
        return;
      }
      const [existing] = await db
        .select()
        .from(idempotencyKeys)
        .where(and(eq(idempotencyKeys.workspaceId, workspaceId), eq(idempotencyKeys.key, key)));
      if (!existing) continue; // removed between the two statements: claim again
      const lastSign = Math.max(existing.createdAt.getTime(), existing.renewedAt?.getTime() ?? 0);
      const abandoned = existing.state === 'processing' && now.getTime() - lastSign > ABANDONED_LOCK_MS;
      if (existing.expiresAt <= now || abandoned) {
        await db
          .delete(idempotencyKeys)
          .where(and(eq(idempotencyKeys.workspaceId, workspaceId), eq(idempotencyKeys.key, key), eq(idempotencyKeys.createdAt, existing.createdAt)));
        continue;
      }
      if (existing.fingerprint !== print) throw ERRORS.idempotencyKeyReused();
      if (existing.state !== 'completed') throw ERRORS.idempotencyInProgress();
      reply.header('x-idempotent-replay', 'true');
      for (const [name, value] of Object.entries(existing.responseHeaders ?? {})) reply.header(name, value);
      return reply.code(existing.responseStatus ?? 200).send(existing.responseBody ?? '');
    }
    throw ERRORS.idempotencyInProgress();
  };

  const store = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const pending = request.idempotency;
    if (!pending) return payload;
    request.idempotency = undefined;
    held.delete(heldId(pending));
    const where = and(eq(idempotencyKeys.workspaceId, pending.workspaceId), eq(idempotencyKeys.key, pending.key));
    const storable = typeof payload === 'string' || Buffer.isBuffer(payload);
    if (reply.statusCode >= 200 && reply.statusCode < 300 && storable) {
      const headers: Record<string, string> = {};
      for (const name of REPLAYED_HEADERS) {
        const value = reply.getHeader(name);
        if (value !== undefined) headers[name] = String(value);
      }
      await db
        .update(idempotencyKeys)
        .set({ state: 'completed', responseStatus: reply.statusCode, responseHeaders: headers, responseBody: payload.toString() })
        .where(where);
    } else {
      await db.delete(idempotencyKeys).where(where);
    }
    return payload;
  };

  // Only write routes get the two hooks: a read never carries the lock, and two async hooks per request were a measurable share of GET /v1/me.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => WRITE_METHODS.has(m))) return;
    route.preHandler = [...toArray(route.preHandler), claim] as typeof route.preHandler;
    route.onSend = [store, ...toArray(route.onSend)] as typeof route.onSend;
  });
}

function toArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** Drops stored responses past their 24 hours (run by the maintenance job). */
export async function purgeExpiredIdempotencyKeys(db: Db): Promise<number> {
  const removed = await db.delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, new Date())).returning({ key: idempotencyKeys.key });
  return removed.length;
}
