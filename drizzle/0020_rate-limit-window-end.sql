-- Each counter keeps its own window's end, so a sweep removes only counters whose window is over (an hour's counter outlives a minute's).
ALTER TABLE "rate_limit_counters" ADD COLUMN "window_end" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Counters written before this migration: kept for the longest window in use (an hour) rather than forgotten at once.
UPDATE "rate_limit_counters" SET "window_end" = "window_start" + 3600000;
