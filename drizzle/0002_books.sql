CREATE TABLE "book_pages" (
	"book_id" integer NOT NULL,
	"number" integer NOT NULL,
	"width_pt" real NOT NULL,
	"height_pt" real NOT NULL,
	"images" jsonb NOT NULL,
	"text" jsonb NOT NULL,
	"links" jsonb NOT NULL,
	"error" text,
	"plain_text" text DEFAULT '' NOT NULL,
	CONSTRAINT "book_pages_book_id_number_pk" PRIMARY KEY("book_id","number")
);
--> statement-breakpoint
CREATE TABLE "books" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "books_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"random_id" text NOT NULL,
	"workspace_id" integer NOT NULL,
	"batch_id" text,
	"external_catalog_id" integer,
	"name" text NOT NULL,
	"slug" text,
	"description" text,
	"status" text,
	"page_images_status" text NOT NULL,
	"page_count" integer DEFAULT 0 NOT NULL,
	"settings" jsonb NOT NULL,
	"pdf_password" text,
	"source_password" text,
	"rendition_id" text,
	"source_key" text,
	"source_format" text,
	"pdf_key" text,
	"outline" jsonb,
	"cover_width_pt" real,
	"cover_height_pt" real,
	"published_date" timestamp (3) with time zone,
	"expires_at" timestamp (3) with time zone,
	"unpublished_at" timestamp (3) with time zone,
	"billing_expires_at" timestamp (3) with time zone,
	"settings_revision" text DEFAULT '' NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "upload_batches" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" integer NOT NULL,
	"status" text NOT NULL,
	"total_pages" integer DEFAULT 0 NOT NULL,
	"completed_pages" integer DEFAULT 0 NOT NULL,
	"failed_pages" integer DEFAULT 0 NOT NULL,
	"error" text,
	"error_code" text,
	"original_filename" text,
	"source_format" text,
	"source_bytes" integer,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "domain_events" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "domain_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"event_id" text NOT NULL,
	"workspace_id" integer NOT NULL,
	"type" text NOT NULL,
	"payload" jsonb NOT NULL,
	"occurred_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "book_pages" ADD CONSTRAINT "book_pages_book_id_books_id_fk" FOREIGN KEY ("book_id") REFERENCES "public"."books"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "books" ADD CONSTRAINT "books_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "upload_batches" ADD CONSTRAINT "upload_batches_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "domain_events" ADD CONSTRAINT "domain_events_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "books_random_id_key" ON "books" USING btree ("random_id");--> statement-breakpoint
CREATE INDEX "books_workspace_created_idx" ON "books" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "books_workspace_updated_idx" ON "books" USING btree ("workspace_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "books_batch_idx" ON "books" USING btree ("batch_id");--> statement-breakpoint
CREATE INDEX "upload_batches_workspace_status_idx" ON "upload_batches" USING btree ("workspace_id","status","created_at");--> statement-breakpoint
CREATE INDEX "domain_events_workspace_type_idx" ON "domain_events" USING btree ("workspace_id","type","occurred_at");