CREATE INDEX "interaction_events_book_type_time_idx" ON "interaction_events" USING btree ("book_id","event_type","occurred_at");--> statement-breakpoint
CREATE INDEX "view_events_viewer_time_idx" ON "view_events" USING btree ("viewer_id","recorded_at");--> statement-breakpoint
CREATE INDEX "view_events_workspace_session_idx" ON "view_events" USING btree ("workspace_id","session_id");