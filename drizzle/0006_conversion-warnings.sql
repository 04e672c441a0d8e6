ALTER TABLE "book_pages" ADD COLUMN "warnings" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "upload_batches" ADD COLUMN "warnings" jsonb DEFAULT '[]'::jsonb NOT NULL;