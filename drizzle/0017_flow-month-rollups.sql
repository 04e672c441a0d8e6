CREATE TABLE "flow_month_rollups" (
	"book_id" integer NOT NULL,
	"day" date NOT NULL,
	"from_page" integer NOT NULL,
	"to_page" integer NOT NULL,
	"views" bigint DEFAULT 0 NOT NULL,
	"entries" bigint DEFAULT 0 NOT NULL,
	"exits" bigint DEFAULT 0 NOT NULL,
	"moves" bigint DEFAULT 0 NOT NULL,
	"readers" text,
	CONSTRAINT "flow_month_rollups_book_id_day_from_page_to_page_pk" PRIMARY KEY("book_id","day","from_page","to_page")
);
--> statement-breakpoint
ALTER TABLE "flow_month_rollups" ADD CONSTRAINT "flow_month_rollups_book_id_books_id_fk" FOREIGN KEY ("book_id") REFERENCES "public"."books"("id") ON DELETE cascade ON UPDATE no action;