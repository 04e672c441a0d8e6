/**
 * The reader's public event endpoints, beside the reader (not under /v1, not
 * in the OpenAPI document):
 *
 *   POST /read/:randomId/events   a batch of interaction events (fetch keepalive or sendBeacon)
 *   POST /read/:randomId/lead     a lead form submission
 *
 * Both pass the same reader gate as the page (a reader the gate would not
 * let in cannot report events), are size-limited and rate-limited per client
 * (hashed IP) and per session. Bots and prefetches are answered but not
 * counted.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { isbot } from 'isbot';
import { Type } from 'typebox';
import type { Db } from '../../platform/db/database.ts';
import { ERRORS } from '../../platform/errors.ts';
import type { ClientRateLimiter, LimitRule } from '../../platform/http/client-rate-limit.ts';
import type { ReaderGate, GateResult } from '../reader/reader.gate.ts';
import type { ReaderBook } from '../reader/reader.service.ts';
import { activeLeadFormFields } from './lead-forms.service.ts';
import { EventBatch, LeadSubmission } from './reader-events.schemas.ts';
import type { EventOrigin, ReaderEventsService } from './reader-events.service.ts';

/** A batch of 200 events with metadata fits well within this; anything larger is refused (413). */
export const EVENTS_BODY_LIMIT = 64 * 1024;
const LEAD_BODY_LIMIT = 16 * 1024;

export interface EventLimits {
  /** Batches per client address per minute (readers behind one NAT share it). Default 600. */
  batchesPerClientPerMinute: number;
  /** Batches per reader session per minute (the reader sends one every 10 s, plus page-hide beacons). Default 60. */
  batchesPerSessionPerMinute: number;
  /** Lead submissions per client address per 10 minutes. Default 10. */
  leadsPerClientPer10Minutes: number;
}

export const DEFAULT_EVENT_LIMITS: EventLimits = { batchesPerClientPerMinute: 600, batchesPerSessionPerMinute: 60, leadsPerClientPer10Minutes: 10 };

export interface ReaderEventsRoutesOptions {
  /** Told how many events each accepted batch stored (metrics). */
  onIngested?: (stored: number) => void;
  db: Db;
  gate: ReaderGate;
  events: ReaderEventsService;
  limiter: ClientRateLimiter;
  publicBaseUrl: string;
  limits?: Partial<EventLimits>;
}

const ROUTE_CONFIG = { public: true, unlimited: true } as const;
/** No per-request log lines (they carry the client address, and readers send many): warnings and errors only. */
const QUIET = 'warn';
const Params = Type.Object({ randomId: Type.String({ maxLength: 64 }) });

/** Requests made ahead of a visit (prefetch, prerender) or by robots are not reading. */
export function notCounted(headers: IncomingHttpHeaders): 'bot' | 'prefetch' | null {
  const purpose = `${headers['sec-purpose'] ?? ''} ${headers.purpose ?? ''} ${headers['x-purpose'] ?? ''} ${headers['x-moz'] ?? ''}`.toLowerCase();
  if (/prefetch|prerender|preview/.test(purpose)) return 'prefetch';
  const agent = headers['user-agent'];
  if (!agent || isbot(agent)) return 'bot';
  return null;
}

function refuse(refused: Extract<GateResult, { ok: false }>): never {
  if (refused.status === 404) throw ERRORS.notFound('Book');
  if (refused.status === 410) throw ERRORS.gone(refused.message);
  if (refused.status === 401) throw ERRORS.unauthenticated(refused.message);
  throw ERRORS.forbidden(refused.message);
}

export const readerEventsRoutes: FastifyPluginAsyncTypebox<ReaderEventsRoutesOptions> = async (app, options) => {
  const limits = { ...DEFAULT_EVENT_LIMITS, ...options.limits };
  const { gate, events, limiter } = options;
  const ownHost = new URL(options.publicBaseUrl).hostname;

  // sendBeacon posts text/plain (a string) or the Blob's type; both carry JSON, parsed here with a tight limit.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json', 'text/plain'], { parseAs: 'string', bodyLimit: EVENTS_BODY_LIMIT }, (_request, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(ERRORS.badRequest('The body is not valid JSON.'), undefined);
    }
  });

  async function limit(rules: (LimitRule & { subject: string })[]): Promise<void> {
    const wait = await limiter.hit(rules);
    if (wait !== null) throw ERRORS.rateLimited(wait);
  }

  async function admit(request: { params: { randomId: string }; headers: IncomingHttpHeaders; query: unknown; ip: string }): Promise<{ book: ReaderBook; origin: EventOrigin }> {
    const result = await gate.check({ randomId: request.params.randomId, headers: request.headers, query: (request.query ?? {}) as Record<string, unknown>, ip: request.ip }, 'events');
    if (!result.ok) refuse(result);
    const { row } = result.book;
    return {
      book: result.book,
      origin: { book: { id: row.id, workspaceId: row.workspaceId, pageCount: row.pageCount, currentVersion: row.currentVersion }, viewerEmail: result.viewer?.email ?? null, ip: request.ip, ownHost },
    };
  }

  app.post('/read/:randomId/events', {
    schema: { hide: true, params: Params, body: EventBatch },
    config: ROUTE_CONFIG,
    bodyLimit: EVENTS_BODY_LIMIT,
    logLevel: QUIET,
  }, async (request, reply) => {
    const batch = request.body;
    await limit([
      { bucket: 'reader:events', max: limits.batchesPerClientPerMinute, windowMs: 60_000, subject: limiter.clientKey(request.ip) },
      { bucket: 'reader:events:session', max: limits.batchesPerSessionPerMinute, windowMs: 60_000, subject: `${request.params.randomId}:${batch.session_id}` },
    ]);
    reply.header('cache-control', 'no-store');
    const skipped = notCounted(request.headers);
    if (skipped) return { received: batch.events.length, stored: 0, counted: false, reason: skipped };
    const { origin } = await admit(request);
    const result = await events.ingest(origin, batch);
    options.onIngested?.(result.stored);
    return { ...result, counted: true };
  });

  app.post('/read/:randomId/lead', {
    schema: { hide: true, params: Params, body: LeadSubmission },
    config: ROUTE_CONFIG,
    bodyLimit: LEAD_BODY_LIMIT,
    logLevel: QUIET,
  }, async (request, reply) => {
    const input = request.body;
    await limit([
      { bucket: 'reader:lead', max: limits.leadsPerClientPer10Minutes, windowMs: 600_000, subject: limiter.clientKey(request.ip) },
      { bucket: 'reader:lead:session', max: 5, windowMs: 600_000, subject: `${request.params.randomId}:${input.session_id}` },
    ]);
    reply.header('cache-control', 'no-store');
    const skipped = notCounted(request.headers);
    if (skipped) return { stored: false, counted: false, reason: skipped };
    const { book, origin } = await admit(request);
    const fields = await activeLeadFormFields(options.db, book.row.id);
    if (!fields) throw ERRORS.notFound('Lead form');
    const result = await events.submitLead(origin, fields, input);
    return { ...result, counted: true };
  });
};
