CREATE TABLE "bulk_settings_batches" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" integer NOT NULL,
	"status" text NOT NULL,
	"settings" jsonb NOT NULL,
	"retry_of_batch_id" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone,
	"cancelled_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "bulk_settings_items" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "bulk_settings_items_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"batch_id" text NOT NULL,
	"position" integer NOT NULL,
	"book_id" integer,
	"book_random_id" text NOT NULL,
	"expected_revision" text NOT NULL,
	"status" text NOT NULL,
	"error_code" text,
	"error" text,
	"revision_before" text,
	"revision_after" text,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "brand_colors" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "brand_colors_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"brand_id" integer NOT NULL,
	"primary_color" text,
	"secondary_color" text,
	"tertiary_color" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "brand_social_media" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "brand_social_media_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"brand_id" integer NOT NULL,
	"twitter" text,
	"linkedin" text,
	"facebook" text,
	"youtube" text,
	"instagram" text,
	"pinterest" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "brands" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "brands_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"workspace_id" integer NOT NULL,
	"company_name" text NOT NULL,
	"logo_key" text,
	"logo_width" integer,
	"logo_height" integer,
	"contact_number" text,
	"website_url" text,
	"google_analytics" text,
	"about_brand" text,
	"take_over_branding" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "bulk_settings_batches" ADD CONSTRAINT "bulk_settings_batches_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bulk_settings_items" ADD CONSTRAINT "bulk_settings_items_batch_id_bulk_settings_batches_id_fk" FOREIGN KEY ("batch_id") REFERENCES "public"."bulk_settings_batches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bulk_settings_items" ADD CONSTRAINT "bulk_settings_items_book_id_books_id_fk" FOREIGN KEY ("book_id") REFERENCES "public"."books"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "brand_colors" ADD CONSTRAINT "brand_colors_brand_id_brands_id_fk" FOREIGN KEY ("brand_id") REFERENCES "public"."brands"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "brand_social_media" ADD CONSTRAINT "brand_social_media_brand_id_brands_id_fk" FOREIGN KEY ("brand_id") REFERENCES "public"."brands"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "brands" ADD CONSTRAINT "brands_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "bulk_settings_batches_workspace_created_idx" ON "bulk_settings_batches" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "bulk_settings_items_batch_position_key" ON "bulk_settings_items" USING btree ("batch_id","position");--> statement-breakpoint
CREATE INDEX "bulk_settings_items_book_idx" ON "bulk_settings_items" USING btree ("book_id");--> statement-breakpoint
CREATE UNIQUE INDEX "brand_colors_brand_key" ON "brand_colors" USING btree ("brand_id");--> statement-breakpoint
CREATE UNIQUE INDEX "brand_social_media_brand_key" ON "brand_social_media" USING btree ("brand_id");--> statement-breakpoint
CREATE UNIQUE INDEX "brands_workspace_key" ON "brands" USING btree ("workspace_id");