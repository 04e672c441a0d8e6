CREATE TABLE "page_month_rollups" (
	"book_id" integer NOT NULL,
	"day" date NOT NULL,
	"page_number" integer NOT NULL,
	"segments" bigint NOT NULL,
	"total_ms" bigint NOT NULL,
	"histogram" jsonb NOT NULL,
	"readers" text NOT NULL,
	CONSTRAINT "page_month_rollups_book_id_day_page_number_pk" PRIMARY KEY("book_id","day","page_number")
);
--> statement-breakpoint
ALTER TABLE "page_month_rollups" ADD CONSTRAINT "page_month_rollups_book_id_books_id_fk" FOREIGN KEY ("book_id") REFERENCES "public"."books"("id") ON DELETE cascade ON UPDATE no action;