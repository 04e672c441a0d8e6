ALTER TABLE "book_pages" ADD COLUMN "drawn" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "book_pages" ADD COLUMN "draw_claim" text;--> statement-breakpoint
ALTER TABLE "book_pages" ADD COLUMN "draw_claimed_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "upload_batches" ADD COLUMN "readable_at" timestamp (3) with time zone;