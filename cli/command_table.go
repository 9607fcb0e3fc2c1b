package cli

import "herald/policy"

// The rows of the command table (commands.go), by subject, in the order
// the usage text lists them.

// setupCommands are the rows for the instance: serving it and creating its database.
func setupCommands() []command {
	return []command{
		{name: "serve", args: "[--listen ADDR] [--domain HOST] [--db FILE|postgres://...] [--role all|web|worker] [flags]",
			help: "run the server (the first serve records the instance's domain)", run: (*cli).serve},
		{name: "init", args: "--domain HOST [--scheme https|http] [--db FILE]",
			help: "create the database for an instance", run: (*cli).initInstance},
	}
}

// actorCommands are the rows for local actors: their profiles, keys, passwords, moves and suspensions.
func actorCommands() []command {
	return []command{
		{name: "actor add", args: "NAME [--name TEXT] [--summary TEXT] [--manual-approval] [--type TYPE]",
			help: "create a local actor and print its bearer token", run: (*cli).actorAdd},
		{name: "actor list", help: "list local actors", run: (*cli).actorList},
		{name: "actor token", args: "NAME", help: "issue a new bearer token (the old one stops working)", run: (*cli).actorToken},
		{name: "actor password", args: "NAME [--stdin] [--remove]",
			help: "set the password NAME logs in with from Mastodon apps (asked without echo, or read from stdin)", run: (*cli).actorPassword},
		{name: "actor tokens", args: "NAME [--revoke ID] [--revoke-all]",
			help: "list the tokens NAME gave Mastodon apps, or revoke them", run: (*cli).actorTokens},
		{name: "actor edit", args: "NAME [--name TEXT] [--summary TEXT] [--field NAME=VALUE]... [--clear-fields] [--avatar URL] [--header URL] [--memorial] [--manual-approval]",
			help: "change the profile and send the Update", run: (*cli).actorEdit},
		{name: "actor rotate-key", args: "NAME",
			help: "give an actor a new key pair; an Update goes to every server that knows it and the relays", run: (*cli).actorRotateKey},
		{name: "actor delete", args: "NAME --yes",
			help: "delete an actor for good and tell every server that knows it", run: (*cli).actorDelete},
		{name: "actor move", args: "NAME --to @user@host",
			help: "move an actor to an account elsewhere that lists it as an alias", run: (*cli).actorMove},
		{name: "actor alias", args: "NAME [--add|--remove @user@host]",
			help: "list or change the accounts elsewhere that may move to NAME", run: (*cli).actorAlias},
		{name: "actor suspend", args: "NAME [--reason TEXT]",
			help: "suspend an actor: served as suspended and announced, nothing else delivered, deleted for good after 30 days", run: (*cli).actorSuspend},
		{name: "actor unsuspend", args: "NAME", help: "lift an actor's suspension before its deletion date, calling the deletion off", run: (*cli).actorUnsuspend},
	}
}

// relayCommands are the rows for relay subscriptions.
func relayCommands() []command {
	return []command{
		{name: "relay add", args: "URL [--style mastodon|litepub]",
			help: "subscribe to a relay (its inbox, or its actor)", run: (*cli).relayAdd},
		{name: "relay list", help: "relays and their state (pending, accepted, rejected)", run: (*cli).relayList},
		{name: "relay remove", args: "URL", help: "unsubscribe from a relay", run: (*cli).relayRemove},
	}
}

// moderationCommands are the rows for domain and account moderation, reports and the allowlist.
func moderationCommands() []command {
	return []command{
		{name: "block", args: "DOMAIN [--severity suspend|limit|noop] [--reject-media] [--reject-reports] [--obfuscate] [--reason TEXT]",
			help: "block (suspend) or limit a domain and its subdomains", run: (*cli).block},
		{name: "block import", args: "FILE [--dry-run]",
			help: "list the domains of a blocklist in Mastodon's domain block CSV, every column", run: (*cli).blockImport},
		{name: "block export", help: "print the blocklist in Mastodon's domain block CSV, every column", run: (*cli).blockExport},
		{name: "unblock", args: "DOMAIN", help: "lift a block", run: (*cli).unblock},
		{name: "blocks", help: "list blocked and limited domains", run: (*cli).blocks},
		{name: "account suspend", args: "ACCOUNT_URL [--reason TEXT]",
			help: "suspend a remote account: nothing from it is accepted, follows with it go", run: accountRule(policy.SeveritySuspend)},
		{name: "account limit", args: "ACCOUNT_URL [--reason TEXT]",
			help: "limit a remote account as a limited domain is", run: accountRule(policy.SeveritySilence)},
		{name: "account clear", args: "ACCOUNT_URL", help: "lift a remote account's suspension or limit", run: accountRule("")},
		{name: "accounts", help: "list the remote accounts suspended or limited", run: (*cli).accounts},
		{name: "report", args: "ACCOUNT_URL --as NAME [--post URL]... [--comment TEXT] [--forward]",
			help: "report a remote account (and forward it to its server, the reporter unnamed)", run: (*cli).reportAccount},
		{name: "report resolve", args: "ID --action limit|suspend|block|delete|none [--note TEXT]",
			help: "take an action on what a report names and resolve it", run: reportSettle(true)},
		{name: "report close", args: "ID [--note TEXT]", help: "close a report without an action", run: reportSettle(false)},
		{name: "report note", args: "ID TEXT", help: "add a moderator's note to a report", run: (*cli).reportNote},
		{name: "reports", args: "[--all]", help: "the report queue: open reports, or every report", run: (*cli).reports},
		{name: "allow add", args: "DOMAIN [--reason TEXT]",
			help: "allow a domain (the allowlist of serve --federation-mode allowlist)", run: (*cli).allowAdd},
		{name: "allow remove", args: "DOMAIN", help: "take a domain off the allowlist", run: (*cli).allowRemove},
		{name: "allow list", help: "list the allowed domains", run: (*cli).allowList},
	}
}

// followRequestCommands are the rows for follow requests waiting for an actor's approval.
func followRequestCommands() []command {
	return []command{
		{name: "follows pending", args: "NAME", help: "list follow requests waiting for approval", run: (*cli).followsPending},
		{name: "follows approve", args: "NAME FOLLOWER_ID",
			help: "accept a follow request (the Accept is queued)", run: (*cli).followsApprove},
		{name: "follows reject", args: "NAME FOLLOWER_ID",
			help: "refuse a follow request (the Reject is queued)", run: (*cli).followsReject},
	}
}

// contentCommands are the rows for what actors publish and whom they follow.
func contentCommands() []command {
	return []command{
		{name: "post", args: `--as NAME [--to public|followers|@user@host] [--cw TEXT] [--reply-to URL] [--lang xx] [--attach FILE [--alt TEXT]] [--quote URL] TEXT`,
			help: "publish a Note", run: (*cli).post},
		{name: "delete", args: "OBJECT_URL", help: "delete a published object (a Delete goes where it went)", run: (*cli).deleteObject},
		{name: "pin", args: "OBJECT_URL", help: "put a post in its actor's featured collection", run: (*cli).pin},
		{name: "unpin", args: "OBJECT_URL", help: "take a post out of its actor's featured collection", run: (*cli).unpin},
		{name: "quote revoke", args: "POST_URL QUOTING_POST_URL", help: "take back the approval of a quote of a post (a Delete of the stamp goes to the quoter)",
			run: (*cli).quoteRevoke},
		{name: "interactions", args: "[NAME]",
			help: "replies, likes, boosts and quotes of posts held for their author's approval", run: (*cli).interactions},
		{name: "interactions approve", args: "ID",
			help: "approve a held interaction (the Accept and its approval are queued)", run: interactionDecide(true)},
		{name: "interactions reject", args: "ID", help: "reject a held interaction (the Reject is queued)", run: interactionDecide(false)},
		{name: "follow", args: "--as NAME @user@host|ACTOR_URL", help: "follow a remote actor", run: (*cli).follow},
		{name: "unfollow", args: "--as NAME @user@host|ACTOR_URL", help: "stop following a remote actor", run: (*cli).unfollow},
		{name: "following", args: "--as NAME", help: "whom NAME follows, and whether they accepted", run: (*cli).following},
	}
}

// deliveryCommands are the rows for the delivery queue and how each host is signed for.
func deliveryCommands() []command {
	return []command{
		{name: "deliveries", args: "[--failed [--host HOST]] [ACTIVITY_URL]",
			help: "delivery queue counts; --failed: the failed deliveries; ACTIVITY_URL: where one activity got to", run: (*cli).deliveries},
		{name: "deliveries retry", args: "--host HOST | --id N | --all", help: "requeue failed deliveries", run: (*cli).deliveriesRetry},
		{name: "deliveries pause", args: "HOST [--for 6h]",
			help: "hold a host's deliveries, spending no retries", run: (*cli).deliveriesPause},
		{name: "deliveries resume", args: "HOST", help: "let a paused host's deliveries go", run: (*cli).deliveriesResume},
		{name: "signatures", args: "[HOST]",
			help: "how deliveries to each host are signed, and the evidence for it", run: (*cli).signatures},
		{name: "signatures reset", args: "HOST [--resend] | --all",
			help: "forget what a host showed: draft-cavage again (--resend: its last 7 days' deliveries go again)", run: (*cli).signaturesReset},
	}
}

// webhookCommands are the rows for apps' webhooks.
func webhookCommands() []command {
	return []command{
		{name: "webhook add", args: "--as NAME URL [--events LIST]",
			help: "POST NAME's events to URL, signed (prints the secret once)", run: (*cli).webhookAdd},
		{name: "webhook list", args: "[--as NAME]",
			help: "webhooks with their queued, failed and delivered counts", run: (*cli).webhookList},
		{name: "webhook deliveries", args: "ID [--failed] [-n N]",
			help: "what was sent to a webhook, and why not", run: (*cli).webhookDeliveries},
		{name: "webhook retry", args: "ID [--delivery N]",
			help: "requeue a webhook's failed deliveries and enable it again", run: (*cli).webhookRetry},
		{name: "webhook pause", args: "ID", help: "hold a webhook's events, sending none until resumed", run: (*cli).webhookPause},
		{name: "webhook resume", args: "ID", help: "send a paused webhook's held events", run: (*cli).webhookResume},
		{name: "webhook remove", args: "ID", help: "remove a webhook and what is queued for it", run: (*cli).webhookRemove},
	}
}

// operatorCommands are the rows for the operator's tools: jobs, logs, migrations, checks, backups, the console.
func operatorCommands() []command {
	return []command{
		{name: "jobs", args: "[-n N]", help: "what the server did for the commands above, newest first", run: (*cli).jobsList},
		{name: "log-level", args: "debug|info|warn|error",
			help: "set the server's log level (recorded in the database)", run: (*cli).logLevel},
		{name: "migrate", help: "apply database migrations and exit", run: (*cli).migrate},
		{name: "doctor", args: "[--peer HOST|URL] [--listen ADDR] [--metrics-listen ADDR] [--json]",
			help: "check what breaks federation (public URL, TLS, proxy, clock, files, disk, database, worker, metrics) and say how to fix it", run: (*cli).doctor},
		{name: "backup", args: "FILE", help: "a consistent copy of the database, while the server runs", run: (*cli).backup},
		{name: "admin password", args: "[--stdin]", help: "set the password of the console at /admin", run: (*cli).adminPassword},
		{name: "db copy", args: "--from herald.db --to postgres://USER@HOST/DB",
			help: "move an instance from SQLite to PostgreSQL (servers stopped)", run: (*cli).dbCopy},
	}
}
