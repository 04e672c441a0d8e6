/**
 * The workspace-level analytics operations (the application's overview) and
 * the analytics settings: the time zone days begin in and the team whose
 * visits `exclude_team` leaves out. Reads need analytics:read and, for the
 * figures, the Company plan like the nine book operations.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type TProperties, type TSchema } from 'typebox';
import { authOf } from '../../platform/http/route-config.ts';
import { Nullable } from '../../platform/http/schemas.ts';
import { DATE_FORMS } from './date-range.ts';
import { MAX_TEAM_EXCLUSIONS, READING_NOW_MAX_VISIT_H, READING_NOW_WINDOW_S, type WorkspaceAnalyticsService } from './workspace-analytics.service.ts';

const config = { scope: 'analytics:read' as const, feature: 'analytics' as const };
const tags = ['Analytics'];
const ERRORS_404_503 = {
  404: { description: "The book (book_id) is not one of this workspace's (ModelNotFoundException), exactly like a missing one.", $ref: 'ErrorEnvelope#' },
  503: { description: 'The query ran longer than ANALYTICS_STATEMENT_TIMEOUT_MS and was stopped (ServiceUnavailableException): narrow the date range.', $ref: 'ErrorEnvelope#' },
};
const COMMON =
  ' A visit counts in the range its visit began in; link clicks when they occurred; leads when submitted. `date` days begin in `tz`, by default the workspace\'s `time_zone` (GET /analytics/settings). ' +
  '`exclude_team=true` leaves out the visits, clicks and leads of identified readers whose address is a member\'s or listed in the settings\' `team_exclusions` (by address or domain).';

const query = <T extends TProperties>(properties: T) => Type.Object(properties, { additionalProperties: false });
const base = {
  date: Type.Optional(Type.String({ maxLength: 32, description: `Calendar days in \`tz\`: ${DATE_FORMS}. Without it, all time.` })),
  tz: Type.Optional(Type.String({ maxLength: 64, description: "IANA time zone in which `date` days begin and buckets are cut. Default: the workspace's `time_zone`." })),
  book_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Only this book (its random_id). Another workspace's book answers 404." })),
  exclude_team: Type.Optional(Type.Boolean({ default: false, description: "Leave out the team's own visits, clicks and leads (members and the settings' team_exclusions). Default false." })),
  tracked_link_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: "Only the visits, link clicks and leads that came through this tracked link (as the book operations' `tracked_link_id`). Another workspace's link matches nothing." })),
};
const limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'How many, 1-100; default 10.' }));

const counts = {
  views: Type.Integer({ description: 'Visits (view events) that began in the range.' }),
  unique_readers: Type.Integer({ description: 'Distinct readers: an identified viewer, or an anonymous visit.' }),
  reading_seconds: Type.Integer({ description: "The visits' active reading time (sum of duration_seconds)." }),
};
const Figures = Type.Object({
  ...counts,
  leads: Type.Integer({ description: 'Lead forms submitted in the range.' }),
  link_clicks: Type.Integer({ description: '`link_clicked` interaction events in the range.' }),
});
const figuresExample = { views: 1200, unique_readers: 950, reading_seconds: 86400, leads: 31, link_clicks: 210 };

const Settings = Type.Object({
  time_zone: Type.String({ description: 'IANA time zone the analytics days begin in when a call gives no `tz`.' }),
  team_exclusions: Type.Array(Type.String(), { description: "Addresses (ann@acme.com) and domains (acme.com) whose readers `exclude_team` leaves out, besides the workspace's members." }),
});
const settingsExample = { time_zone: 'Europe/Paris', team_exclusions: ['acme.com', 'agency@partner.example'] };

const ok = (schema: TSchema, example: unknown) => ({ ...ERRORS_404_503, 200: Type.Object({ data: schema }, { examples: [{ data: example }] }) });

export const workspaceAnalyticsRoutes: FastifyPluginAsyncTypebox<{ workspace: WorkspaceAnalyticsService }> = async (app, { workspace }) => {
  app.get('/analytics/settings', {
    schema: {
      operationId: 'getAnalyticsSettings', tags, summary: "The workspace's analytics settings",
      description: 'The time zone analytics days begin in by default, and the addresses and domains counted as the team. On every plan.',
      response: { 200: Type.Object({ data: Settings }, { examples: [{ data: settingsExample }] }) },
    },
    config: { scope: 'analytics:read' },
  }, async (request) => ({ data: await workspace.settings(authOf(request).workspaceId) }));

  app.patch('/analytics/settings', {
    schema: {
      operationId: 'updateAnalyticsSettings', tags, summary: "Change the workspace's analytics settings",
      description:
        '`time_zone` must be an IANA name (422 otherwise). `team_exclusions` replaces the list: each entry an address or a domain (a leading `@` is dropped), ' +
        `stored lower case without duplicates, at most ${MAX_TEAM_EXCLUSIONS}; an entry that is neither is a 422 naming it. Left-out fields keep their values.`,
      body: Type.Object({
        time_zone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        team_exclusions: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 254 }), { maxItems: MAX_TEAM_EXCLUSIONS })),
      }, { additionalProperties: false }),
      response: { 200: Type.Object({ data: Settings }, { examples: [{ data: settingsExample }] }) },
    },
    config: { scope: 'workspace:write' },
  }, async (request) => ({ data: await workspace.updateSettings(authOf(request).workspaceId, request.body) }));

  app.get('/analytics/summary', {
    schema: {
      operationId: 'getAnalyticsSummary', tags, summary: "The workspace's (or a book's) figures over a range",
      description:
        'Views, unique readers, reading time, leads and link clicks over the range; `meta.previous` has the same figures for the period of the same number of days just before ' +
        '(null for all time).' + COMMON,
      querystring: query(base),
      response: {
        ...ERRORS_404_503,
        200: Type.Object({
          data: Figures,
          meta: Type.Object({
            time_zone: Type.String(),
            from: Nullable(Type.String({ format: 'date-time', description: 'The range, inclusive; null without a bound.' })),
            to: Nullable(Type.String({ format: 'date-time', description: 'Exclusive; null without a bound.' })),
            previous: Nullable(Type.Object({ from: Type.String({ format: 'date-time' }), to: Type.String({ format: 'date-time' }), ...Figures.properties })),
          }),
        }, {
          examples: [{
            data: figuresExample,
            meta: { time_zone: 'Europe/Paris', from: '2026-02-28T23:00:00.000Z', to: '2026-03-30T22:00:00.000Z', previous: { from: '2026-01-29T23:00:00.000Z', to: '2026-02-28T23:00:00.000Z', ...figuresExample } },
          }],
        }),
      },
    },
    config,
  }, async (request) => workspace.summary(authOf(request).workspaceId, request.query));

  app.get('/analytics/views-over-time', {
    schema: {
      operationId: 'getViewsOverTime', tags, summary: 'Visits per day, week or month',
      description:
        'Every bucket of the range (zeros included), oldest first; `period` is its first day in `tz`. `interval` defaults to `day` up to 92 days, `week` (from Monday) up to 400, `month` beyond; ' +
        'all time starts at the first visit. `meta.today` is the current day in `tz`.' + COMMON,
      querystring: query({ ...base, interval: Type.Optional(Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('month')], { description: 'Bucket size; default from the range\'s length.' })) }),
      response: {
        ...ERRORS_404_503,
        200: Type.Object({
          data: Type.Array(Type.Object({ period: Type.String({ description: 'YYYY-MM-DD, the first day of the bucket.' }), ...counts })),
          meta: Type.Object({ interval: Type.String(), time_zone: Type.String(), today: Type.String() }),
        }, { examples: [{ data: [{ period: '2026-03-02', views: 40, unique_readers: 35, reading_seconds: 2900 }], meta: { interval: 'day', time_zone: 'Europe/Paris', today: '2026-03-02' } }] }),
      },
    },
    config,
  }, async (request) => workspace.viewsOverTime(authOf(request).workspaceId, request.query));

  app.get('/analytics/reading-now', {
    schema: {
      operationId: 'getReadingNow', tags, summary: 'Reader sessions open now',
      description:
        `Visits of the workspace (or of \`book_id\`) whose reader sent events in the last ${READING_NOW_WINDOW_S} seconds and has not closed the book (no \`session_ended\`), among the visits begun in the last ${READING_NOW_MAX_VISIT_H} hours. ` +
        'The reader sends a batch every 10 s while something happens, so a reader idle on one page leaves the count after the window. Poll it (the application asks every 15 s).',
      querystring: query({ book_id: base.book_id, exclude_team: base.exclude_team }),
      response: ok(Type.Object({ sessions: Type.Integer(), window_seconds: Type.Integer(), at: Type.String({ format: 'date-time' }) }), { sessions: 3, window_seconds: READING_NOW_WINDOW_S, at: '2026-03-02T10:12:00.000Z' }),
    },
    config,
  }, async (request) => workspace.readingNow(authOf(request).workspaceId, request.query));

  app.get('/analytics/top-books', {
    schema: {
      operationId: 'getTopBooks', tags, summary: 'The most visited books',
      description: 'Books by visits in the range, most first (ties by age).' + COMMON,
      querystring: query({ ...base, limit }),
      response: ok(Type.Array(Type.Object({ book_id: Type.String(), name: Type.String(), ...counts })), [{ book_id: 'q0bS0fGx2t9M1cFqR7xN2A', name: 'Spring catalogue', views: 420, unique_readers: 380, reading_seconds: 30100 }]),
    },
    config,
  }, async (request) => workspace.topBooks(authOf(request).workspaceId, request.query));

  app.get('/analytics/top-tracked-links', {
    schema: {
      operationId: 'getTopTrackedLinks', tags, summary: 'The tracked links that brought the most visits',
      description: 'Tracked links by visits in the range, most first.' + COMMON,
      querystring: query({ ...base, limit }),
      response: ok(
        Type.Array(Type.Object({ tracked_link_id: Type.Integer(), name: Type.String(), slug: Type.String(), book_id: Type.String(), book_name: Type.String(), ...counts })),
        [{ tracked_link_id: 12, name: 'March newsletter', slug: 'march', book_id: 'q0bS0fGx2t9M1cFqR7xN2A', book_name: 'Spring catalogue', views: 120, unique_readers: 110, reading_seconds: 8000 }],
      ),
    },
    config,
  }, async (request) => workspace.topTrackedLinks(authOf(request).workspaceId, request.query));

  app.get('/analytics/top-embedding-sites', {
    schema: {
      operationId: 'getTopEmbeddingSites', tags, summary: 'The sites embedding the books that brought the most visits',
      description: 'Hosts of the pages the books were embedded in (visits `from_embedded` with a `source_host`), by visits in the range, most first.' + COMMON,
      querystring: query({ ...base, limit }),
      response: ok(Type.Array(Type.Object({ host: Type.String(), ...counts })), [{ host: 'shop.example.com', views: 80, unique_readers: 75, reading_seconds: 5100 }]),
    },
    config,
  }, async (request) => workspace.topEmbeddingSites(authOf(request).workspaceId, request.query));
};
