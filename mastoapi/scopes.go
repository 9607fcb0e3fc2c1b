package mastoapi

import (
	"slices"
	"strings"
)

// Scopes are Mastodon 4.x's OAuth scopes, in the order its server
// metadata lists them (config/initializers/doorkeeper.rb and the API's
// OpenAPI description): the top-level ones and their children.
var Scopes = []string{
	"profile", "read", "write", "push", "follow", "admin:read", "admin:write",
	"read:accounts", "read:blocks", "read:bookmarks", "read:collections", "read:favourites", "read:filters", "read:follows",
	"read:lists", "read:mutes", "read:notifications", "read:search", "read:statuses",
	"write:accounts", "write:blocks", "write:bookmarks", "write:collections", "write:conversations", "write:favourites",
	"write:filters", "write:follows", "write:lists", "write:media", "write:mutes", "write:notifications", "write:reports",
	"write:statuses",
	"admin:read:accounts", "admin:read:canonical_email_blocks", "admin:read:domain_allows", "admin:read:domain_blocks",
	"admin:read:email_domain_blocks", "admin:read:ip_blocks", "admin:read:reports",
	"admin:write:accounts", "admin:write:canonical_email_blocks", "admin:write:domain_allows", "admin:write:domain_blocks",
	"admin:write:email_domain_blocks", "admin:write:ip_blocks", "admin:write:reports",
}

// followScopes are what the deprecated follow scope grants: Mastodon's
// controllers accept it wherever they accept these (e.g. follows:
// doorkeeper_authorize! :follow, :write, :'write:follows').
var followScopes = []string{"read:follows", "write:follows", "read:blocks", "write:blocks", "read:mutes", "write:mutes"}

// ValidScope reports whether s is one of Scopes.
func ValidScope(s string) bool { return slices.Contains(Scopes, s) }

// ParseScopes reads a scope parameter: scopes separated by spaces (or
// the pluses a query string may carry), duplicates dropped. It returns
// def when s names none, and ok false when one is not a scope.
func ParseScopes(s string, def []string) (scopes []string, ok bool) {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '+' || r == '\t' || r == '\n' }) {
		if !ValidScope(f) {
			return nil, false
		}
		if !slices.Contains(scopes, f) {
			scopes = append(scopes, f)
		}
	}
	if len(scopes) == 0 {
		return slices.Clone(def), true
	}
	return scopes, true
}

// Covers reports whether a token with the scope have may do what the
// scope need allows: the same scope, a parent of it (read covers
// read:statuses, admin:read covers admin:read:accounts), or follow for
// the follows, blocks and mutes scopes.
func Covers(have, need string) bool {
	switch {
	case have == need:
		return true
	case have == "follow":
		return slices.Contains(followScopes, need)
	case have == "profile" || have == "push":
		return false
	}
	return strings.HasPrefix(need, have+":")
}

// Granted reports whether scopes (a token's) allow a route that accepts
// any of need.
func Granted(scopes, need []string) bool {
	for _, h := range scopes {
		for _, n := range need {
			if Covers(h, n) {
				return true
			}
		}
	}
	return false
}

// subset reports whether every scope of want is covered by one of have:
// what an authorization or a client_credentials grant may ask of an app
// registered with have.
func subset(want, have []string) bool {
	for _, w := range want {
		if !Granted(have, []string{w}) {
			return false
		}
	}
	return true
}
