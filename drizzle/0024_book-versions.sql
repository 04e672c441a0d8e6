CREATE TABLE "book_version_pages" (
	"version_id" integer NOT NULL,
	"number" integer NOT NULL,
	"width_pt" real NOT NULL,
	"height_pt" real NOT NULL,
	"images" jsonb NOT NULL,
	"text" jsonb NOT NULL,
	"links" jsonb NOT NULL,
	"error" text,
	"warnings" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"plain_text" text DEFAULT '' NOT NULL,
	CONSTRAINT "book_version_pages_version_id_number_pk" PRIMARY KEY("version_id","number")
);
--> statement-breakpoint
CREATE TABLE "book_versions" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "book_versions_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"book_id" integer NOT NULL,
	"number" integer NOT NULL,
	"batch_id" text,
	"status" text NOT NULL,
	"created_by" jsonb,
	"source_filename" text,
	"source_key" text,
	"source_format" text,
	"source_password" text,
	"pdf_key" text,
	"rendition_id" text,
	"page_count" integer DEFAULT 0 NOT NULL,
	"outline" jsonb,
	"cover_width_pt" real,
	"cover_height_pt" real,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"published_at" timestamp (3) with time zone,
	"expired_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "books" ADD COLUMN "current_version" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "book_version_pages" ADD CONSTRAINT "book_version_pages_version_id_book_versions_id_fk" FOREIGN KEY ("version_id") REFERENCES "public"."book_versions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "book_versions" ADD CONSTRAINT "book_versions_book_id_books_id_fk" FOREIGN KEY ("book_id") REFERENCES "public"."books"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "book_versions_book_number_key" ON "book_versions" USING btree ("book_id","number");--> statement-breakpoint
CREATE INDEX "book_versions_batch_idx" ON "book_versions" USING btree ("batch_id");
