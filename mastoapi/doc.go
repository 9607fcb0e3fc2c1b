// Package mastoapi is Herald's Mastodon-compatible client API: what lets
// people use Herald from the Mastodon apps they have (Ivory, Tusky, Elk,
// Phanpy, ...). It is one more front on the same core: the same store,
// and every activity it sends goes out through the node's Publisher, as
// the ActivityPub outbox's do. docs/clients.md describes it for operators
// and the next wave; this comment is the map of the code.
//
// # Routes
//
// routes.go is the one list of endpoints. Each Route names its method and
// chi pattern, its Access (Public: a token is optional but checked when
// sent; AppToken: any token; UserToken: a logged-in actor's token, an
// app's own token gets 422) and the scopes it accepts. A token passes a
// route when one of its scopes Covers one of the route's: the same scope,
// a parent (read covers read:statuses, admin:read covers
// admin:read:accounts), or the deprecated follow scope for the follows,
// blocks and mutes scopes. Without a token a route that needs one answers
// 401, with one that lacks the scope 403, both in Mastodon's words. The
// token comes from Authorization: Bearer or the access_token parameter.
//
// A handler is func(*Call) error. The Call carries the request, the
// response writer, the Params, the Token and its Actor. Returning an
// *Error answers {"error": msg} with its status (Errorf, and ErrNotFound
// and the other Mastodon messages in errors.go); store.ErrNotFound is 404,
// an outbox.InputError 422 with its reason, anything else a logged 500.
//
// # Parameters
//
// Params (params.go) reads the query, a urlencoded or multipart form and
// a JSON body alike, the body over the query, as Rails merges them for
// Mastodon: a JSON body is flattened into Rails' bracket keys, so
// Params.Get("home[last_read_id]"), List("id") (id[]=1&id[]=2 or a JSON
// array), Bool (Rails' truthiness), Records("fields_attributes") and
// File("avatar") read every client's encoding the same way.
//
// # Ids, times and pages
//
// Every id the API shows is a decimal string (ID, ParseID). Accounts get
// theirs from the account_ids table the first time the API shows them: a
// Snowflake (store.Snowflake: milliseconds << 16 | 16 random bits) of the
// local actor's creation or of when a remote one was first shown. The
// later tables (statuses, notifications) key their rows by NewID of the
// row's time (a remote status's published time, clamped to now), so
// timelines page by index range scans on the primary key and ids sort by
// time as Mastodon's do. Times are written with Time or Timestamp
// (2006-01-02T15:04:05.000Z); an account's created_at is its day (Day).
//
// Lists page as Mastodon's do: Call.Page reads max_id, since_id, min_id
// and limit (default and twice-default cap per list), the store returns
// the page newest first (store.KeysetPage; min_id pages forward), and
// Call.Link writes the Link header: next by max_id when the page was
// full, prev by min_id (timelines) or since_id (account lists). The
// relationship lists, whose rows have no id of their own, use the cursor
// "MILLISECONDS_ACCOUNTID" (account_lists.go).
//
// # OAuth
//
// oauth_*.go: apps (POST /api/v1/apps), the authorize page (Herald's own
// log-in and consent form in web/templates/oauth, CSRF-protected, rate
// limited by package login like the console), the token endpoint
// (authorization_code with PKCE S256 verified when the authorization sent
// a challenge, client_credentials), revocation, RFC 8414 metadata and
// userinfo. Client secrets, codes and tokens are stored as SHA-256 of 256
// random bits, passwords as bcrypt.
//
// # CORS
//
// CORS wraps the server's root router: /api/*, /oauth/token,
// /oauth/revoke, /oauth/userinfo, /.well-known/* and /nodeinfo/* answer
// any origin and their preflights, as Mastodon's rack-cors setup does.
package mastoapi
