-- Generated from store/schema/0110_milliseconds.sql by `go generate ./store`: edit that file.
-- One time unit: every time in the schema is unix milliseconds, as the
-- queues' times (deliveries, jobs, webhooks, processes, relays) and the
-- instance's always were. The columns below held unix seconds; they now
-- hold the same instants in milliseconds (whole seconds: the store keeps
-- writing them to the second). delivery_history.minute held the minute
-- (unix seconds / 60) and host_failures.day the UTC day (days since the
-- epoch): both now hold the start of theirs, in milliseconds.
UPDATE actors SET created_at = created_at * 1000, deleted_at = deleted_at * 1000;
UPDATE instance_actor SET created_at = created_at * 1000;
UPDATE followers SET created_at = created_at * 1000;
UPDATE following SET created_at = created_at * 1000;
UPDATE remote_actors SET fetched_at = fetched_at * 1000;
UPDATE remote_keys SET fetched_at = fetched_at * 1000;
UPDATE blocked_domains SET created_at = created_at * 1000;
UPDATE allowed_domains SET created_at = created_at * 1000;
UPDATE processed_activities SET received_at = received_at * 1000;
UPDATE inbox_items SET received_at = received_at * 1000, deleted_at = deleted_at * 1000, undone_at = undone_at * 1000;
UPDATE hosts SET last_inbound_at = last_inbound_at * 1000, unavailable_since = unavailable_since * 1000,
	last_failure_at = last_failure_at * 1000, paused_at = paused_at * 1000, paused_until = paused_until * 1000;
UPDATE host_failures SET day = day * 86400000;
UPDATE activities SET created_at = created_at * 1000;
UPDATE objects SET created_at = created_at * 1000, updated_at = updated_at * 1000, deleted_at = deleted_at * 1000,
	pinned_at = pinned_at * 1000;
UPDATE actor_blocks SET created_at = created_at * 1000;
UPDATE actor_domain_blocks SET created_at = created_at * 1000;
UPDATE followers_sync_jobs SET requested_at = requested_at * 1000, done_at = done_at * 1000;
UPDATE media SET created_at = created_at * 1000, removed_at = removed_at * 1000;
UPDATE admin SET set_at = set_at * 1000;
UPDATE admin_sessions SET created_at = created_at * 1000, expires_at = expires_at * 1000;
UPDATE delivery_history SET minute = minute * 60000;

-- When each migration was applied: the rows this Herald wrote before this
-- one (on a new database, all of them) are in milliseconds already; older
-- ones are unix seconds (about 1.8 x 10^9 today), far below 10^11 (10^11
-- seconds is the year 5138, 10^11 milliseconds 1973).
UPDATE schema_migrations SET applied_at = applied_at * 1000 WHERE applied_at < 100000000000;
