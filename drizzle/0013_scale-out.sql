CREATE TABLE "conversion_leases" (
	"batch_id" text PRIMARY KEY NOT NULL,
	"token" text NOT NULL,
	"owner" text NOT NULL,
	"state" text NOT NULL,
	"runs" integer DEFAULT 1 NOT NULL,
	"requeues" integer DEFAULT 0 NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"renewed_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD COLUMN "renewed_at" timestamp (3) with time zone;