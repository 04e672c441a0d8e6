-- Custom SQL (drizzle-kit cannot express storage parameters): the rollup rows (a ~2.7 KB HyperLogLog sketch and
-- a ~1 KB histogram per page row, sketches up to 2.7 KB per move row) stay inline and uncompressed below 8,160
-- bytes. The rollup job rewrites these rows on every fold that touches them; with the default target (~2 KB)
-- each rewrite compressed them and each read decompressed them (3 times the time of a 2,000-row upsert,
-- measured). Existing rows keep their storage until their next rewrite. Works alike on PGlite.
ALTER TABLE "page_day_rollups" SET (toast_tuple_target = 8160);--> statement-breakpoint
ALTER TABLE "page_month_rollups" SET (toast_tuple_target = 8160);--> statement-breakpoint
ALTER TABLE "flow_day_rollups" SET (toast_tuple_target = 8160);--> statement-breakpoint
ALTER TABLE "flow_month_rollups" SET (toast_tuple_target = 8160);
