ALTER TABLE "interaction_events" ADD COLUMN "book_version" integer;--> statement-breakpoint
ALTER TABLE "view_events" ADD COLUMN "book_version" integer;