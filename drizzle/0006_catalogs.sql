CREATE TABLE "catalog_items" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "catalog_items_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"catalog_id" integer NOT NULL,
	"workspace_id" integer NOT NULL,
	"source" text NOT NULL,
	"external_item_key" text NOT NULL,
	"external_product_id" text NOT NULL,
	"external_variant_id" text,
	"sku" text,
	"title" text,
	"status" text,
	"product_type" text,
	"price" text,
	"regular_price" text,
	"sale_price" text,
	"currency" text,
	"image" text,
	"url" text,
	"description" text,
	"short_description" text,
	"stock_status" text,
	"stock_quantity" integer,
	"available" boolean,
	"gallery" jsonb,
	"categories" jsonb,
	"payload" jsonb,
	"raw_payload" jsonb,
	"availability" jsonb,
	"last_sync_status" text,
	"last_sync_error" text,
	"content_hash" text NOT NULL,
	"snapshot_at" timestamp (3) with time zone NOT NULL,
	"availability_snapshot_at" timestamp (3) with time zone NOT NULL,
	"last_synced_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_availability_synced_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "catalog_sync_jobs" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "catalog_sync_jobs_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"catalog_id" integer NOT NULL,
	"workspace_id" integer NOT NULL,
	"type" text NOT NULL,
	"status" text NOT NULL,
	"total" integer DEFAULT 0 NOT NULL,
	"processed" integer DEFAULT 0 NOT NULL,
	"accepted" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"errors" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"input" jsonb,
	"snapshot_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"trigger" text,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "catalogs" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "catalogs_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"workspace_id" integer NOT NULL,
	"name" text NOT NULL,
	"source" text NOT NULL,
	"external_id" text,
	"source_url" text,
	"status" text NOT NULL,
	"metadata" jsonb,
	"template_key" text,
	"last_synced_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_sync_status" text,
	"last_sync_error" text,
	"feed_imported_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "catalog_items" ADD CONSTRAINT "catalog_items_catalog_id_catalogs_id_fk" FOREIGN KEY ("catalog_id") REFERENCES "public"."catalogs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalog_items" ADD CONSTRAINT "catalog_items_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalog_sync_jobs" ADD CONSTRAINT "catalog_sync_jobs_catalog_id_catalogs_id_fk" FOREIGN KEY ("catalog_id") REFERENCES "public"."catalogs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalog_sync_jobs" ADD CONSTRAINT "catalog_sync_jobs_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalogs" ADD CONSTRAINT "catalogs_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "catalog_items_catalog_key_key" ON "catalog_items" USING btree ("catalog_id","external_item_key");--> statement-breakpoint
CREATE INDEX "catalog_items_catalog_id_idx" ON "catalog_items" USING btree ("catalog_id","id");--> statement-breakpoint
CREATE INDEX "catalog_sync_jobs_catalog_id_idx" ON "catalog_sync_jobs" USING btree ("catalog_id","id");--> statement-breakpoint
CREATE INDEX "catalogs_workspace_id_idx" ON "catalogs" USING btree ("workspace_id","id");