-- Generated from store/schema/0040_engines.sql by `go generate ./store`: edit that file.
-- Two engines, several processes (issue 16).


-- What a serving process does: 'all' (herald serve), 'web' (HTTP only) or
-- 'worker' (deliveries, jobs and sweeps, no HTTP). Commands and the status
-- page look for a live worker.
ALTER TABLE processes ADD COLUMN role TEXT NOT NULL DEFAULT 'all';

