/**
 * The set-based seed of one book's reader visits and their interaction events, shared by
 * bench/analytics-server.ts (bench:analytics, in chunks) and bench/analytics-screens.bench.ts.
 * Visits spread over `days` days up to two minutes ago, so a visit's last event (10 s apart) is in the past, as the ingest
 * keeps it (it clamps times to its clock), and old enough for the rollup fold's settle time: a visit begun now put events up
 * to 90 s ahead, and the fold (which stops at the first event younger than 10 s) left every event after it unfolded, a
 * quarter of the seed, which the queries then read raw (bench figures before 26 November). A third anonymous, a fifth through one of the book's
 * 5 tracked links (from `minLink`), half from shop.example.com. Each visit's events: session_started,
 * page segments, and in a third of the visits a link click as the last event.
 */
import { sql } from 'drizzle-orm';

export interface SeedShape {
  workspaceId: number;
  bookId: number;
  /** The first of `readers` consecutive viewer ids. */
  minViewer: number;
  readers: number;
  /** The first of the book's 5 consecutive tracked link ids. */
  minLink: number;
  pages: number;
  days: number;
  /** Events per visit (at least 3). */
  perVisit: number;
}

/** Visits number `from` to `to` (inclusive). */
export function seedVisits(s: SeedShape, from: number, to: number) {
  return sql`
    insert into view_events (workspace_id, book_id, session_id, viewer_id, tracked_link_id, source_host, from_embedded, reads, clicks,
                             pages_viewed, pages_seen, active_ms, duration_seconds, engagement_score, recorded_at, updated_at)
    select ${s.workspaceId}, ${s.bookId}, 'bench-' || g, case when g % 3 = 0 then null else ${s.minViewer} + (g::bigint * 7919) % ${s.readers} end,
           case when g % 5 = 0 then ${s.minLink} + g % 5 end, case when g % 2 = 0 then 'shop.example.com' end, g % 4 = 0, 1, g % 3,
           ${s.perVisit - 2}, array(select 1 + (g + p) % ${s.pages} from generate_series(1, ${s.perVisit - 2}) p), ${(s.perVisit - 2) * 5000}, ${(s.perVisit - 2) * 5},
           (g % 1000) / 10.0, now() - interval '2 minutes' - ((g::bigint * 104729) % (${s.days} * 86400)) * interval '1 second', now()
    from generate_series(${from}::int, ${to}::int) g`;
}

/** The events of the book's visits whose id is from `fromView` to `toView` (inclusive). */
export function seedEvents(s: SeedShape, fromView: number, toView: number) {
  const last = s.perVisit - 1;
  return sql`
    insert into interaction_events (workspace_id, book_id, view_event_id, viewer_id, tracked_link_id, session_id, sequence, event_type, page_number,
                                    active_ms, source_type, source_host, metadata, occurred_at, created_at)
    select v.workspace_id, v.book_id, v.id, v.viewer_id, v.tracked_link_id, v.session_id, s,
           case when s = 0 then 'session_started' when s = ${last} and v.id % 3 = 0 then 'link_clicked' else 'page_segment_completed' end,
           1 + (v.id + s) % ${s.pages}, case when s > 0 and not (s = ${last} and v.id % 3 = 0) then 500 + ((v.id * 31 + s * 977) % 20000)::int end,
           case when v.tracked_link_id is not null then 'tracked_link' else 'direct' end, v.source_host,
           case when s = ${last} and v.id % 3 = 0 then '[{"url":"https://shop.example.com/offer"}]'::jsonb end,
           v.recorded_at + s * interval '10 seconds', v.recorded_at + s * interval '10 seconds'
    from view_events v, generate_series(0, ${last}) s
    where v.book_id = ${s.bookId} and v.id between ${fromView} and ${toView}`;
}
