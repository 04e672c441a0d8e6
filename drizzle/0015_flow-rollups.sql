CREATE TABLE "flow_day_links" (
	"book_id" integer NOT NULL,
	"day" date NOT NULL,
	"prev_day" date NOT NULL,
	"from_page" integer NOT NULL,
	"to_page" integer NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "flow_day_links_book_id_day_prev_day_from_page_to_page_pk" PRIMARY KEY("book_id","day","prev_day","from_page","to_page")
);
--> statement-breakpoint
CREATE TABLE "flow_day_rollups" (
	"book_id" integer NOT NULL,
	"day" date NOT NULL,
	"from_page" integer NOT NULL,
	"to_page" integer NOT NULL,
	"views" bigint DEFAULT 0 NOT NULL,
	"entries" bigint DEFAULT 0 NOT NULL,
	"exits" bigint DEFAULT 0 NOT NULL,
	"moves" bigint DEFAULT 0 NOT NULL,
	"readers" text,
	CONSTRAINT "flow_day_rollups_book_id_day_from_page_to_page_pk" PRIMARY KEY("book_id","day","from_page","to_page")
);
--> statement-breakpoint
ALTER TABLE "flow_day_links" ADD CONSTRAINT "flow_day_links_book_id_books_id_fk" FOREIGN KEY ("book_id") REFERENCES "public"."books"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "flow_day_rollups" ADD CONSTRAINT "flow_day_rollups_book_id_books_id_fk" FOREIGN KEY ("book_id") REFERENCES "public"."books"("id") ON DELETE cascade ON UPDATE no action;