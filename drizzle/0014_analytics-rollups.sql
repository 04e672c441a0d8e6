CREATE TABLE "analytics_rollup_state" (
	"name" text PRIMARY KEY NOT NULL,
	"watermark" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "page_day_rollups" (
	"book_id" integer NOT NULL,
	"day" date NOT NULL,
	"page_number" integer NOT NULL,
	"segments" bigint NOT NULL,
	"total_ms" bigint NOT NULL,
	"histogram" jsonb NOT NULL,
	"readers" text NOT NULL,
	CONSTRAINT "page_day_rollups_book_id_day_page_number_pk" PRIMARY KEY("book_id","day","page_number")
);
--> statement-breakpoint
ALTER TABLE "page_day_rollups" ADD CONSTRAINT "page_day_rollups_book_id_books_id_fk" FOREIGN KEY ("book_id") REFERENCES "public"."books"("id") ON DELETE cascade ON UPDATE no action;