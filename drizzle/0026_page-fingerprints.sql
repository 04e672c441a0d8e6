CREATE TABLE "book_page_fingerprints" (
	"book_id" integer NOT NULL,
	"version" integer NOT NULL,
	"page_number" integer NOT NULL,
	"text_hash" text NOT NULL,
	"image_hash" text NOT NULL,
	"match_version" integer,
	"match_page" integer,
	CONSTRAINT "book_page_fingerprints_book_id_version_page_number_pk" PRIMARY KEY("book_id","version","page_number")
);
--> statement-breakpoint
ALTER TABLE "book_page_fingerprints" ADD CONSTRAINT "book_page_fingerprints_book_id_books_id_fk" FOREIGN KEY ("book_id") REFERENCES "public"."books"("id") ON DELETE cascade ON UPDATE no action;