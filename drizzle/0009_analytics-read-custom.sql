-- Custom SQL (drizzle-kit cannot express INCLUDE): the page segments that page-performance, reader-pages,
-- book-flow and their exports aggregate, by book and time, carrying every column those reads need, so
-- PostgreSQL answers them from the index alone (no heap visits for millions of rows). Partial: the other
-- event types (a minority) are not in it. Works alike on PGlite.
CREATE INDEX IF NOT EXISTS "interaction_events_segments_idx" ON "interaction_events" ("book_id", "occurred_at")
  INCLUDE ("page_number", "active_ms", "viewer_id", "session_id", "sequence", "tracked_link_id")
  WHERE "event_type" = 'page_segment_completed';
