/**
 * The workspace-level analytics operations over HTTP (summary, views over
 * time, top books, tracked links and embedding sites) and the analytics
 * settings, on seeded visits whose answers the test computes on its own:
 * every figure with and without `exclude_team`, one book, the workspace's
 * time zone as the default and a day boundary in it, the previous period,
 * plan and scope refusals, another workspace's data never counted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { leads, viewEvents } from '../../src/modules/analytics/analytics.tables.ts';
import { memberships, users } from '../../src/modules/people/people.tables.ts';
import { insertBook } from '../factories.ts';
import { startService, type TestService } from '../helpers.ts';
import { insertLead, insertLink, insertViewer, insertVisit } from './analytics-seed.ts';

interface Seed {
  session: string;
  book: 'a' | 'b';
  viewer: string | null;
  link: 'march' | 'april' | null;
  at: string;
  seconds: number;
  clicks?: number;
  host?: string;
}

// 23:30 UTC on 1 March is 2 March in Tokyo; 14:30 UTC on 2 March is 3 March there.
const SEEDS: Seed[] = [
  { session: 's1', book: 'a', viewer: 'alice@example.com', link: 'march', at: '2026-03-01T23:30:00Z', seconds: 12, clicks: 1, host: 'shop.example.com' },
  { session: 's2', book: 'a', viewer: 'bob@example.com', link: null, at: '2026-03-02T10:00:00Z', seconds: 7 },
  { session: 's3', book: 'a', viewer: null, link: null, at: '2026-03-02T14:30:00Z', seconds: 5, host: 'blog.example.org' },
  { session: 's4', book: 'b', viewer: 'alice@example.com', link: 'april', at: '2026-03-03T09:00:00Z', seconds: 20, clicks: 2, host: 'shop.example.com' },
  { session: 's5', book: 'b', viewer: 'owner@team.example', link: null, at: '2026-03-04T09:00:00Z', seconds: 30, clicks: 1 },
  { session: 's6', book: 'a', viewer: 'zed@agency.example', link: 'march', at: '2026-03-05T12:00:00Z', seconds: 9, clicks: 3 },
  { session: 's7', book: 'b', viewer: null, link: null, at: '2026-02-20T08:00:00Z', seconds: 4 },
  { session: 's8', book: 'a', viewer: 'bob@example.com', link: null, at: '2026-03-05T13:00:00Z', seconds: 6, host: 'blog.example.org' },
];
const LEADS = [
  { email: 'carol@example.com', book: 'a', at: '2026-03-02T11:00:00Z' },
  { email: 'zed@agency.example', book: 'a', at: '2026-03-05T12:05:00Z' },
  { email: 'owner@team.example', book: 'b', at: '2026-03-04T09:05:00Z' },
] as const;
/** The member (a person of the workspace) and the listed domain. */
const TEAM = (email: string | null) => email === 'owner@team.example' || (email?.endsWith('@agency.example') ?? false);

function civilDay(iso: string, tz: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(iso));
}

describe('workspace analytics', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let other: { id: number; key: string };
  const books: Record<string, Awaited<ReturnType<typeof insertBook>>> = {};
  const links: Record<string, number> = {};
  const viewerIds = new Map<string, number>();

  before(async () => {
    svc = await startService({ worker: false });
    const db = svc.runtime.database.db;
    ws = await svc.workspace();
    other = await svc.workspace();
    books.a = await insertBook(svc, ws.id, { status: 'publish', pageCount: 4, name: 'Spring catalogue' });
    books.b = await insertBook(svc, ws.id, { status: 'publish', pageCount: 4, name: 'Autumn catalogue' });
    const foreign = await insertBook(svc, other.id, { status: 'publish', pageCount: 4 });
    links.march = await insertLink(svc, ws.id, books.a.id, 'March newsletter', 'march');
    links.april = await insertLink(svc, ws.id, books.b.id, 'April newsletter', 'april');
    const [owner] = await db.insert(users).values({ email: 'owner@team.example' }).returning();
    await db.insert(memberships).values({ workspaceId: ws.id, userId: owner!.id, role: 'owner' });
    for (const s of SEEDS) {
      if (s.viewer && !viewerIds.has(s.viewer)) viewerIds.set(s.viewer, await insertViewer(svc, ws.id, s.viewer));
      const visit = await insertVisit(svc, books[s.book]!, {
        session: s.session, viewerId: s.viewer ? viewerIds.get(s.viewer)! : null, linkId: s.link ? links[s.link]! : null, at: new Date(s.at),
        pages: [[1, s.seconds * 1000]], clicks: s.clicks ?? 0, host: s.host ?? null,
      });
      if (s.host) await db.update(viewEvents).set({ fromEmbedded: true }).where(eq(viewEvents.id, visit.viewEventId));
    }
    for (const l of LEADS) {
      // A lead identifies its reader by the address typed, as the lead endpoint does.
      if (!viewerIds.has(l.email)) viewerIds.set(l.email, await insertViewer(svc, ws.id, l.email));
      const lead = await insertLead(svc, books[l.book]!, { name: 'Lead', email: l.email, at: new Date(l.at) });
      await db.update(leads).set({ viewerId: viewerIds.get(l.email)! }).where(eq(leads.id, lead.id));
    }
    // Another workspace's visit, on the same days, with a member's address: never counted here.
    const stranger = await insertViewer(svc, other.id, 'alice@example.com');
    await insertVisit(svc, foreign, { session: 'x1', viewerId: stranger, linkId: null, at: new Date('2026-03-02T10:00:00Z'), pages: [[1, 50_000]], clicks: 4, host: 'shop.example.com' });
    await insertLead(svc, foreign, { name: 'X', email: 'x@example.com', at: new Date('2026-03-02T10:00:00Z') });
  });
  after(() => svc.stop());

  const get = (path: string, query: Record<string, string | number | boolean> = {}, key = ws.key) => svc.request('GET', `/v1/analytics/${path}`, { key, query });
  const setSettings = (body: unknown, key = ws.key) => svc.request('PATCH', '/v1/analytics/settings', { key, body });

  /** The expected figures, from the seeds alone. */
  function expected(f: { from?: string; to?: string; book?: 'a' | 'b'; excludeTeam?: boolean; link?: 'march' | 'april' }) {
    const inRange = (at: string) => (!f.from || at >= f.from) && (!f.to || at < f.to);
    const keep = (book: string, email: string | null, at: string) => inRange(at) && (!f.book || book === f.book) && !(f.excludeTeam && TEAM(email));
    const visits = SEEDS.filter((s) => keep(s.book, s.viewer, new Date(s.at).toISOString()) && (!f.link || s.link === f.link));
    // Seeded clicks occur 20 s (and a few ms) after the visit began.
    const clicks = SEEDS.filter((s) => keep(s.book, s.viewer, new Date(Date.parse(s.at) + 20_000).toISOString()) && (!f.link || s.link === f.link)).reduce((n, s) => n + (s.clicks ?? 0), 0);
    return {
      views: visits.length,
      unique_readers: new Set(visits.map((s) => s.viewer ?? `anon-${s.session}`)).size,
      reading_seconds: visits.reduce((n, s) => n + s.seconds, 0),
      // The seeded leads came through no tracked link.
      leads: f.link ? 0 : LEADS.filter((l) => keep(l.book, l.email, new Date(l.at).toISOString())).length,
      link_clicks: clicks,
      visits,
    };
  }
  const figures = (e: ReturnType<typeof expected>) => ({ views: e.views, unique_readers: e.unique_readers, reading_seconds: e.reading_seconds, leads: e.leads, link_clicks: e.link_clicks });

  it('answers 403 without the Company plan or the analytics:read scope', async () => {
    const pro = await svc.workspace({ plan: 'pro' });
    const narrow = await svc.key(ws.id, ['books:read']);
    for (const path of ['summary', 'views-over-time', 'top-books', 'top-tracked-links', 'top-embedding-sites', 'reading-now']) {
      const planned = await get(path, {}, pro.key);
      assert.equal(planned.status, 403, path);
      assert.equal(planned.body.error.type, 'PlanRestrictionException');
      const scoped = await get(path, {}, narrow.key);
      assert.equal(scoped.status, 403, path);
      assert.deepEqual(scoped.body.error.details.required_scope, ['analytics:read']);
    }
    // The settings are on every plan.
    assert.equal((await svc.request('GET', '/v1/analytics/settings', { key: pro.key })).status, 200);
  });

  it('keeps the time zone and the team list, validated and normalised', async () => {
    const initial = await svc.request('GET', '/v1/analytics/settings', { key: ws.key });
    assert.deepEqual(initial.body.data, { time_zone: 'UTC', team_exclusions: [] });
    const bad = await setSettings({ time_zone: 'Mars/Olympus' });
    assert.equal(bad.status, 422);
    assert.ok(bad.body.error.details.time_zone);
    const badList = await setSettings({ team_exclusions: ['not an address'] });
    assert.equal(badList.status, 422);
    assert.match(badList.body.error.details.team_exclusions[0], /not an address/);
    const viewer = await svc.key(ws.id, ['analytics:read']);
    assert.equal((await setSettings({ time_zone: 'Asia/Tokyo' }, viewer.key)).status, 403);
    const saved = await setSettings({ time_zone: 'Asia/Tokyo', team_exclusions: ['@Agency.Example', 'agency.example', 'Someone@Else.example'] });
    assert.equal(saved.status, 200);
    assert.deepEqual(saved.body.data, { time_zone: 'Asia/Tokyo', team_exclusions: ['agency.example', 'someone@else.example'] });
    // Another workspace's settings are its own.
    assert.equal((await svc.request('GET', '/v1/analytics/settings', { key: other.key })).body.data.time_zone, 'UTC');
  });

  it('summary: every figure equals the independent count, with and without the team, per book, with the previous period', async () => {
    // Tokyo (the setting above) is the default zone: 2026-03-02,2026-03-04 there is [03-01 15:00Z, 03-04 15:00Z).
    for (const excludeTeam of [false, true]) {
      for (const book of [undefined, 'a', 'b'] as const) {
        const query: Record<string, string | boolean> = { date: '2026-03-02,2026-03-04', exclude_team: excludeTeam };
        if (book) query.book_id = books[book]!.randomId;
        const res = await get('summary', query);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const label = `${book ?? 'workspace'} exclude_team=${excludeTeam}`;
        assert.deepEqual(res.body.data, figures(expected({ from: '2026-03-01T15:00:00.000Z', to: '2026-03-04T15:00:00.000Z', book, excludeTeam })), label);
        assert.equal(res.body.meta.time_zone, 'Asia/Tokyo');
        const previous = expected({ from: '2026-02-26T15:00:00.000Z', to: '2026-03-01T15:00:00.000Z', book, excludeTeam });
        assert.deepEqual(res.body.meta.previous, { from: '2026-02-26T15:00:00.000Z', to: '2026-03-01T15:00:00.000Z', ...figures(previous) }, label);
      }
    }
    // All time: no previous period; the other workspace's visit, clicks and lead never count.
    const whole = await get('summary');
    assert.deepEqual(whole.body.data, figures(expected({})));
    assert.equal(whole.body.meta.previous, null);
    // The same range in UTC moves s1 (23:30Z on 1 March) out and s3's day.
    const utc = await get('summary', { date: '2026-03-02,2026-03-04', tz: 'UTC' });
    assert.deepEqual(utc.body.data, figures(expected({ from: '2026-03-02T00:00:00.000Z', to: '2026-03-05T00:00:00.000Z' })));
  });

  it('tracked_link_id: the figures and series of one tracked link, equal to the book operations for that link', async () => {
    for (const [link, book] of [['march', 'a'], ['april', 'b']] as const) {
      for (const excludeTeam of [false, true]) {
        const query = { date: '2026-03-01,2026-03-05', tz: 'UTC', exclude_team: excludeTeam, tracked_link_id: links[link]! };
        const res = await get('summary', query);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const want = figures(expected({ from: '2026-03-01T00:00:00.000Z', to: '2026-03-06T00:00:00.000Z', excludeTeam, link }));
        assert.deepEqual(res.body.data, want, `${link} exclude_team=${excludeTeam}`);
        assert.ok(want.views > 0 || excludeTeam);
        // The same as the book's own operations for the link.
        const bookQuery = { ...query, book_id: books[book]!.randomId, limit: 500 };
        assert.equal((await get('book-view-events', bookQuery)).body.data.length, want.views);
        assert.equal((await get('interaction-events', { ...bookQuery, event_type: 'link_clicked' })).body.data.length, want.link_clicks);
        assert.deepEqual((await get('summary', { ...query, book_id: books[book]!.randomId })).body.data, want);
        const series = await get('views-over-time', query);
        assert.equal(series.body.data.reduce((n: number, b: { views: number }) => n + b.views, 0), want.views);
      }
    }
    // Another workspace's link, or a link of another book of this one with book_id, matches nothing.
    const foreignLink = await insertLink(svc, other.id, (await insertBook(svc, other.id, { status: 'publish', pageCount: 2 })).id, 'Foreign', 'foreign');
    const zero = { views: 0, unique_readers: 0, reading_seconds: 0, leads: 0, link_clicks: 0 };
    assert.deepEqual((await get('summary', { tracked_link_id: foreignLink })).body.data, zero);
    assert.deepEqual((await get('summary', { tracked_link_id: links.march!, book_id: books.b!.randomId })).body.data, zero);
    assert.equal((await get('summary', { tracked_link_id: 0 })).status, 422);
  });

  it('views over time: every bucket of the range in the zone, summing to the summary', async () => {
    for (const [tz, excludeTeam] of [['Asia/Tokyo', false], ['UTC', true], ['America/New_York', false]] as const) {
      const res = await get('views-over-time', { date: '2026-02-28,2026-03-06', tz, exclude_team: excludeTeam });
      assert.equal(res.status, 200);
      assert.equal(res.body.meta.interval, 'day');
      const days = ['2026-02-28', '2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05', '2026-03-06'];
      const visits = expected({ excludeTeam }).visits;
      const want = days.map((period) => {
        const on = visits.filter((s) => civilDay(s.at, tz) === period);
        return { period, views: on.length, unique_readers: new Set(on.map((s) => s.viewer ?? s.session)).size, reading_seconds: on.reduce((n, s) => n + s.seconds, 0) };
      });
      assert.deepEqual(res.body.data, want, tz);
    }
    const weekly = await get('views-over-time', { date: '2026-02-16,2026-03-08', tz: 'UTC', interval: 'week' });
    assert.deepEqual(weekly.body.data.map((b: { period: string; views: number }) => [b.period, b.views]), [['2026-02-16', 1], ['2026-02-23', 1], ['2026-03-02', 6]]);
    const monthly = await get('views-over-time', { tz: 'UTC', interval: 'month', book_id: books.b!.randomId });
    assert.deepEqual(monthly.body.data.slice(0, 2).map((b: { period: string; views: number }) => [b.period, b.views]), [['2026-02-01', 1], ['2026-03-01', 2]]);
    assert.equal((await get('views-over-time', { interval: 'hour' })).status, 422);
  });

  it('top books, tracked links and embedding sites rank the independent counts', async () => {
    for (const excludeTeam of [false, true]) {
      const visits = expected({ excludeTeam }).visits;
      // Ties: by age (books, links: the seed order), hosts by name.
      const rank = <K extends string>(key: (s: Seed) => K | null, order: readonly string[] = []) => {
        const groups = new Map<K, Seed[]>();
        for (const s of visits) {
          const k = key(s);
          if (k !== null) groups.set(k, [...(groups.get(k) ?? []), s]);
        }
        return [...groups].map(([k, list]) => ({ key: k, views: list.length, unique_readers: new Set(list.map((s) => s.viewer ?? s.session)).size, reading_seconds: list.reduce((n, s) => n + s.seconds, 0) }))
          .sort((x, y) => y.views - x.views || (order.length ? order.indexOf(x.key) - order.indexOf(y.key) : x.key.localeCompare(y.key)));
      };
      const topBooks = await get('top-books', { exclude_team: excludeTeam });
      assert.deepEqual(
        topBooks.body.data.map((b: Record<string, unknown>) => ({ key: b.book_id === books.a!.randomId ? 'a' : 'b', views: b.views, unique_readers: b.unique_readers, reading_seconds: b.reading_seconds })),
        rank((s) => s.book, ['a', 'b']),
      );
      const topLinks = await get('top-tracked-links', { exclude_team: excludeTeam });
      assert.deepEqual(
        topLinks.body.data.map((l: Record<string, unknown>) => ({ key: l.slug, views: l.views, unique_readers: l.unique_readers, reading_seconds: l.reading_seconds })),
        rank((s) => s.link, ['march', 'april']),
      );
      assert.equal(topLinks.body.data[0].book_id, books.a!.randomId);
      const sites = await get('top-embedding-sites', { exclude_team: excludeTeam });
      assert.deepEqual(
        sites.body.data.map((h: Record<string, unknown>) => ({ key: h.host, views: h.views, unique_readers: h.unique_readers, reading_seconds: h.reading_seconds })),
        rank((s) => s.host ?? null),
      );
    }
    const one = await get('top-books', { limit: 1 });
    assert.equal(one.body.data.length, 1);
  });

  it('exclude_team leaves the same readers out of every book operation and export, agreeing with the summary', async () => {
    const team = new Set([...viewerIds].filter(([email]) => TEAM(email)).map(([, id]) => id));
    assert.equal(team.size, 2);
    const book_id = books.a!.randomId;
    const both = async (path: string, query: Record<string, string | number | boolean> = {}) => {
      const [all, kept] = [await get(path, { book_id, ...query }), await get(path, { book_id, ...query, exclude_team: true })];
      assert.equal(all.status, 200, path);
      assert.equal(kept.status, 200, path);
      return { all: all.body, kept: kept.body };
    };
    const notTeam = (r: { viewer_id: number | null }) => r.viewer_id === null || !team.has(r.viewer_id);
    for (const path of ['book-view-events', 'interaction-events', 'audit-log', 'reader-pages']) {
      const { all, kept } = await both(path);
      assert.ok(all.data.some((r: { viewer_id: number | null }) => !notTeam(r)), `${path} has team rows to leave out`);
      assert.deepEqual(kept.data, all.data.filter(notTeam), path);
    }
    const readers = await both('readers', { include_anonymous: true });
    assert.deepEqual(readers.kept.data, readers.all.data.filter(notTeam));
    // Page 1 holds every seeded visit's only segment: its counts are the visits that remain.
    const summary = (await get('summary', { book_id, exclude_team: true })).body.data;
    const pages = await both('page-performance');
    assert.equal(pages.kept.data[0].total_segments, summary.views);
    assert.equal(pages.kept.data[0].unique_readers, summary.unique_readers);
    const flow = await both('book-flow');
    assert.equal(flow.kept.meta.visits, summary.views);
    assert.equal(flow.kept.data.pages[0].entries, summary.views);
    const events = await get('interaction-events', { book_id, exclude_team: true, event_type: 'link_clicked' });
    assert.equal(events.body.data.length, summary.link_clicks);
    // The exports take the same switch: the interaction events file lists the API's rows.
    const csv = await svc.request('GET', `/v1/exports/books/${book_id}/interaction-events`, { key: ws.key, query: { exclude_team: true, bom: false } });
    assert.equal(csv.status, 200);
    const lines = csv.text.trim().split('\r\n');
    const kept = (await get('interaction-events', { book_id, exclude_team: true, limit: 500 })).body.data;
    assert.equal(lines.length - 1, kept.length);
    const leads = await svc.request('GET', `/v1/exports/books/${book_id}/leads`, { key: ws.key, query: { exclude_team: true, bom: false } });
    assert.equal(leads.text.trim().split('\r\n').length - 1, summary.leads);
  });

  it('reading now counts the open visits of the last two minutes, per book and without the team', async () => {
    const db = svc.runtime.database.db;
    const now = Date.now();
    const live = (session: string, book: 'a' | 'b', viewer: string | null, agoMs: number) =>
      insertVisit(svc, books[book]!, { session, viewerId: viewer ? viewerIds.get(viewer)! : null, linkId: null, at: new Date(now - agoMs), pages: [[1, 1000]] });
    const before = (await get('reading-now')).body.data.sessions;
    await live('live-a', 'a', null, 30_000);
    await live('live-member', 'a', 'owner@team.example', 20_000);
    await live('live-b', 'b', 'alice@example.com', 60_000);
    const closed = await live('closed-a', 'a', null, 10_000);
    await db.update(viewEvents).set({ exitReason: 'closed' }).where(eq(viewEvents.id, closed.viewEventId));
    await live('stale-a', 'a', null, 5 * 60_000);
    // A page load begun 25 hours ago that sent a batch just now: beyond the 24 hours looked at.
    const old = await live('old-a', 'a', null, 25 * 3_600_000);
    await db.update(viewEvents).set({ updatedAt: new Date(now - 5_000) }).where(eq(viewEvents.id, old.viewEventId));
    const res = await get('reading-now');
    assert.equal(res.status, 200);
    assert.equal(res.body.data.sessions - before, 3);
    assert.equal(res.body.data.window_seconds, 120);
    assert.equal((await get('reading-now', { book_id: books.a!.randomId })).body.data.sessions, 2);
    assert.equal((await get('reading-now', { book_id: books.a!.randomId, exclude_team: true })).body.data.sessions, 1);
    assert.equal((await get('reading-now', { book_id: books.b!.randomId })).body.data.sessions, 1);
    assert.equal((await get('reading-now', {}, other.key)).body.data.sessions, 0);
  });

  it("answers 404 for another workspace's book and 422 for a bad range", async () => {
    const foreign = await insertBook(svc, other.id, { status: 'publish', pageCount: 2 });
    const res = await get('summary', { book_id: foreign.randomId });
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, (await get('summary', { book_id: 'no-such-book' })).body);
    assert.equal((await get('summary', { date: '2026-02-30' })).status, 422);
    assert.equal((await get('top-books', { tz: 'Nowhere/Land' })).status, 422);
  });
});
