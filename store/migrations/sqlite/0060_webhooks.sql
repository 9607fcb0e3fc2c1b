-- Generated from store/schema/0060_webhooks.sql by `go generate ./store`: edit that file.
-- Webhook endpoints an actor's app registered (`herald webhook add`, the app
-- API): Herald POSTs the actor's events to url, signed with secret as the
-- Standard Webhooks specification says. Times are unix milliseconds.
CREATE TABLE webhooks (
	id          INTEGER  PRIMARY KEY,
	actor_id    INTEGER  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	url         TEXT    NOT NULL,
	events      TEXT    NOT NULL, -- event types, comma-separated, or '*' for all
	secret      TEXT    NOT NULL, -- whsec_<base64>: needed to sign, shown only at creation
	created_at  INTEGER  NOT NULL,
	disabled_at INTEGER,           -- set when the receiver answered 410 Gone
	disabled_reason TEXT
) STRICT;

CREATE INDEX webhooks_actor ON webhooks(actor_id);

-- One event for an actor, stored once for all its endpoints, in the same
-- transaction as what it reports (the inbox row, the follower row, the
-- failed delivery). body is the payload exactly as it is sent and signed.
CREATE TABLE webhook_events (
	id         INTEGER  PRIMARY KEY,
	msg_id     TEXT    NOT NULL UNIQUE, -- the webhook-id header: the same on every attempt
	actor_id   INTEGER  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	type       TEXT    NOT NULL,
	body       TEXT    NOT NULL,
	created_at INTEGER  NOT NULL
) STRICT;

-- One row per (event, endpoint), sent by the delivery scheduler in a lane of
-- its own: the same states, leases, owners and retry schedule as deliveries.
CREATE TABLE webhook_deliveries (
	id          INTEGER  PRIMARY KEY,
	event_id    INTEGER  NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
	webhook_id  INTEGER  NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
	state       TEXT    NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'leased', 'done', 'failed')),
	attempts    INTEGER NOT NULL DEFAULT 0,
	next_at     INTEGER  NOT NULL,
	lease_until INTEGER,
	lease_owner TEXT,
	enqueued_at INTEGER  NOT NULL,
	updated_at  INTEGER  NOT NULL,
	last_status INTEGER,
	last_error  TEXT,
	UNIQUE (event_id, webhook_id)
) STRICT;

-- The scheduler looks for due rows endpoint by endpoint (webhook_id, state,
-- next_at), so one endpoint's backlog is never scanned to find another's;
-- sweeps and expired leases go by state.
CREATE INDEX webhook_deliveries_queue ON webhook_deliveries(webhook_id, state, next_at);
CREATE INDEX webhook_deliveries_state ON webhook_deliveries(state, updated_at);

