// Code generated from the command table in commands.go by `go generate ./cli`; DO NOT EDIT.

// Package cli is herald's command line: one command per file, named after
// it, and one table (commands.go) that dispatches, prints the usage and
// writes this list.
//
// Usage:
//
//	herald serve [--listen ADDR] [--domain HOST] [--db FILE|postgres://...] [--role all|web|worker] [flags]
//	herald init --domain HOST [--scheme https|http] [--db FILE]
//	herald actor add NAME [--name TEXT] [--summary TEXT] [--manual-approval] [--type TYPE]
//	herald actor list
//	herald actor token NAME
//	herald actor password NAME [--stdin] [--remove]
//	herald actor tokens NAME [--revoke ID] [--revoke-all]
//	herald actor edit NAME [--name TEXT] [--summary TEXT] [--field NAME=VALUE]... [--clear-fields] [--avatar URL] [--header URL] [--memorial] [--manual-approval]
//	herald actor rotate-key NAME
//	herald actor delete NAME --yes
//	herald actor move NAME --to @user@host
//	herald actor alias NAME [--add|--remove @user@host]
//	herald actor suspend NAME [--reason TEXT]
//	herald actor unsuspend NAME
//	herald relay add URL [--style mastodon|litepub]
//	herald relay list
//	herald relay remove URL
//	herald block DOMAIN [--severity suspend|limit|noop] [--reject-media] [--reject-reports] [--obfuscate] [--reason TEXT]
//	herald block import FILE [--dry-run]
//	herald block export
//	herald unblock DOMAIN
//	herald blocks
//	herald account suspend ACCOUNT_URL [--reason TEXT]
//	herald account limit ACCOUNT_URL [--reason TEXT]
//	herald account clear ACCOUNT_URL
//	herald accounts
//	herald report ACCOUNT_URL --as NAME [--post URL]... [--comment TEXT] [--forward]
//	herald report resolve ID --action limit|suspend|block|delete|none [--note TEXT]
//	herald report close ID [--note TEXT]
//	herald report note ID TEXT
//	herald reports [--all]
//	herald allow add DOMAIN [--reason TEXT]
//	herald allow remove DOMAIN
//	herald allow list
//	herald follows pending NAME
//	herald follows approve NAME FOLLOWER_ID
//	herald follows reject NAME FOLLOWER_ID
//	herald post --as NAME [--to public|followers|@user@host] [--cw TEXT] [--reply-to URL] [--lang xx] [--attach FILE [--alt TEXT]] [--quote URL] TEXT
//	herald delete OBJECT_URL
//	herald pin OBJECT_URL
//	herald unpin OBJECT_URL
//	herald quote revoke POST_URL QUOTING_POST_URL
//	herald follow --as NAME @user@host|ACTOR_URL
//	herald unfollow --as NAME @user@host|ACTOR_URL
//	herald following --as NAME
//	herald deliveries [--failed [--host HOST]] [ACTIVITY_URL]
//	herald deliveries retry --host HOST | --id N | --all
//	herald deliveries pause HOST [--for 6h]
//	herald deliveries resume HOST
//	herald signatures [HOST]
//	herald signatures reset HOST [--resend] | --all
//	herald webhook add --as NAME URL [--events LIST]
//	herald webhook list [--as NAME]
//	herald webhook deliveries ID [--failed] [-n N]
//	herald webhook retry ID [--delivery N]
//	herald webhook pause ID
//	herald webhook resume ID
//	herald webhook remove ID
//	herald jobs [-n N]
//	herald log-level debug|info|warn|error
//	herald migrate
//	herald doctor [--peer HOST|URL] [--listen ADDR] [--metrics-listen ADDR] [--json]
//	herald backup FILE
//	herald admin password [--stdin]
//	herald db copy --from herald.db --to postgres://USER@HOST/DB
//	herald bench fanout [--scenario a|b|c|d|e|f|all|none] [--hosts N[,N...]] [--engines sqlite,postgres,postgres2 --postgres URL] [--rounds N] [--queued ROWS] [--markdown] [flags]
//	herald bench wake [--posts N] [--gap D] [--idle D] [--postgres URL]
//	herald version
//	herald help [COMMAND]
//
// The instance (the scheme and domain of every id) lives in the database:
// herald init or the first herald serve records it, and every other command
// reads it from there. Commands that need the network (post, follow, ...)
// leave a job for the running server, which does the work.
//
// Every flag can also be set with an environment variable: --listen is
// HERALD_LISTEN, --allow-private-network is HERALD_ALLOW_PRIVATE_NETWORK.
// Flags win over variables. See docs/configuration.md.
package cli
