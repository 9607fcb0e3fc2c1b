package mastoapi

import (
	"net/http"

	"herald/store"
)

// routes is every endpoint of the client API with who may call it and
// the scopes it accepts, as Mastodon's controllers declare them
// (before_action -> { doorkeeper_authorize! ... }). A route is declared
// here and nowhere else; the next endpoint is one more line.
//
// Scopes: a route accepts a token holding any of its scopes or a parent
// of one (read covers read:accounts; follow covers the follows, blocks
// and mutes scopes). A route with no scopes accepts any valid token.
func (h *Handler) routes() []Route {
	const (
		get, post, patch = http.MethodGet, http.MethodPost, http.MethodPatch
	)
	s := func(scopes ...string) []string { return scopes }
	readAccounts, writeAccounts := s("read:accounts"), s("write:accounts")
	readFollows, writeFollows := s("read:follows"), s("write:follows")
	return []Route{
		// OAuth 2 (oauth_*.go).
		{post, "/api/v1/apps", Public, nil, h.createApp},
		{get, "/api/v1/apps/verify_credentials", AppToken, nil, h.verifyApp},
		{get, "/oauth/authorize", Public, nil, h.authorizePage},
		{post, "/oauth/authorize", Public, nil, h.approve},
		{post, "/oauth/token", Public, nil, h.token},
		{post, "/oauth/revoke", Public, nil, h.revoke},
		{get, "/oauth/userinfo", UserToken, s("profile"), h.userinfo},
		{post, "/oauth/userinfo", UserToken, s("profile"), h.userinfo},
		{get, "/.well-known/oauth-authorization-server", Public, nil, h.metadata},

		// The instance (instance.go).
		{get, "/api/v1/instance", Public, nil, h.instanceV1},
		{get, "/api/v2/instance", Public, nil, h.instanceV2},
		{get, "/api/v1/instance/peers", Public, nil, emptyList},
		{get, "/api/v1/instance/activity", Public, nil, emptyList},
		{get, "/api/v1/instance/rules", Public, nil, emptyList},
		{get, "/api/v1/instance/domain_blocks", Public, nil, emptyList},
		{get, "/api/v1/instance/translation_languages", Public, nil, emptyObject},
		{get, "/api/v1/custom_emojis", Public, nil, emptyList},
		{get, "/api/v1/announcements", UserToken, s("read"), emptyList},
		{get, "/api/v1/trends", Public, nil, emptyList},
		{get, "/api/v1/trends/tags", Public, nil, emptyList},
		{get, "/api/v1/trends/statuses", Public, nil, emptyList},
		{get, "/api/v1/trends/links", Public, nil, emptyList},
		{get, "/api/v1/directory", Public, readAccounts, emptyList},

		// The account's settings and state (misc.go).
		{get, "/api/v1/preferences", UserToken, readAccounts, h.preferences},
		{get, "/api/v1/markers", UserToken, s("read:statuses"), h.getMarkers},
		{post, "/api/v1/markers", UserToken, s("write:statuses"), h.setMarkers},
		{get, "/api/v1/filters", UserToken, s("read:filters"), emptyList},
		{get, "/api/v2/filters", UserToken, s("read:filters"), emptyList},
		{get, "/api/v1/followed_tags", UserToken, readFollows, emptyList},
		{get, "/api/v1/featured_tags", UserToken, readAccounts, emptyList},
		{get, "/api/v1/featured_tags/suggestions", UserToken, readAccounts, emptyList},
		{get, "/api/v1/endorsements", UserToken, readAccounts, emptyList},
		{get, "/api/v1/suggestions", UserToken, s("read"), emptyList},
		{get, "/api/v2/suggestions", UserToken, s("read"), emptyList},
		{get, "/api/v1/domain_blocks", UserToken, s("read:blocks"), h.domainBlocks},

		// Placeholders until the statuses part serves them: Mastodon's
		// answer for an account with nothing there yet.
		{get, "/api/v1/lists", UserToken, s("read:lists"), emptyList},
		{get, "/api/v1/conversations", UserToken, s("read:statuses"), emptyList},
		{get, "/api/v1/scheduled_statuses", UserToken, s("read:statuses"), emptyList},
		{get, "/api/v1/bookmarks", UserToken, s("read:bookmarks"), emptyList},
		{get, "/api/v1/favourites", UserToken, s("read:favourites"), emptyList},
		{get, "/api/v1/notifications", UserToken, s("read:notifications"), emptyList},
		{get, "/api/v1/notifications/unread_count", UserToken, s("read:notifications"), unreadCount},
		{get, "/api/v1/notifications/requests", UserToken, s("read:notifications"), emptyList},
		{get, "/api/v2/notifications/policy", UserToken, s("read:notifications"), h.notificationPolicy},
		{get, "/api/v1/timelines/home", UserToken, s("read:statuses"), emptyList},
		{get, "/api/v1/timelines/public", Public, s("read:statuses"), emptyList},
		{get, "/api/v1/timelines/tag/{tag}", Public, s("read:statuses"), emptyList},
		{get, "/api/v1/timelines/list/{id}", UserToken, s("read:lists"), emptyList},

		// Accounts (accounts.go, account_lists.go, profile.go).
		{get, "/api/v1/accounts/verify_credentials", UserToken, s("read:accounts", "profile"), h.verifyCredentials},
		{patch, "/api/v1/accounts/update_credentials", UserToken, writeAccounts, h.updateCredentials},
		{get, "/api/v1/accounts/lookup", Public, readAccounts, h.lookup},
		{get, "/api/v1/accounts/search", UserToken, s("read:accounts"), h.searchAccounts},
		{get, "/api/v1/accounts/relationships", UserToken, readFollows, h.relationships},
		{get, "/api/v1/accounts/familiar_followers", UserToken, readFollows, h.familiarFollowers},
		{get, "/api/v1/accounts/{id}", Public, readAccounts, h.getAccount},
		{get, "/api/v1/accounts/{id}/statuses", Public, s("read:statuses"), emptyList},
		{get, "/api/v1/accounts/{id}/followers", Public, readAccounts, h.relationList(store.ListFollowers)},
		{get, "/api/v1/accounts/{id}/following", Public, readAccounts, h.relationList(store.ListFollowing)},
		{get, "/api/v1/accounts/{id}/featured_tags", Public, readAccounts, emptyList},
		{get, "/api/v1/accounts/{id}/lists", UserToken, s("read:lists"), emptyList},
		{get, "/api/v1/accounts/{id}/identity_proofs", UserToken, readAccounts, emptyList},
		{post, "/api/v1/accounts/{id}/follow", UserToken, writeFollows, h.action(h.follow)},
		{post, "/api/v1/accounts/{id}/unfollow", UserToken, writeFollows, h.action(h.unfollow)},
		{post, "/api/v1/accounts/{id}/block", UserToken, s("write:blocks"), h.action(h.block)},
		{post, "/api/v1/accounts/{id}/unblock", UserToken, s("write:blocks"), h.action(h.unblock)},
		{post, "/api/v1/accounts/{id}/mute", UserToken, s("write:mutes"), h.action(h.mute)},
		{post, "/api/v1/accounts/{id}/unmute", UserToken, s("write:mutes"), h.action(h.unmute)},
		{get, "/api/v1/follow_requests", UserToken, readFollows, h.ownList(store.ListFollowRequests)},
		{post, "/api/v1/follow_requests/{id}/authorize", UserToken, writeFollows, h.answerRequest(true)},
		{post, "/api/v1/follow_requests/{id}/reject", UserToken, writeFollows, h.answerRequest(false)},
		{get, "/api/v1/blocks", UserToken, s("read:blocks"), h.ownList(store.ListBlocks)},
		{get, "/api/v1/mutes", UserToken, s("read:mutes"), h.mutes},
	}
}

// pages outside the API that Mount adds: the missing avatar and header.
var imagePaths = []string{missingAvatar, missingHeader}
