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
	return append(h.entryRoutes(), h.contentRoutes()...)
}

// entryRoutes are the routes an app calls first: OAuth 2, the instance,
// the account's settings.
func (h *Handler) entryRoutes() []Route {
	const (
		get, post, patch = http.MethodGet, http.MethodPost, http.MethodPatch
		put, del         = http.MethodPut, http.MethodDelete
	)
	s := func(scopes ...string) []string { return scopes }
	readAccounts, readFollows := s("read:accounts"), s("read:follows")
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

		{get, "/api/v1/scheduled_statuses", UserToken, s("read:statuses"), emptyList},
		{get, "/api/v1/notifications/requests", UserToken, s("read:notifications"), emptyList},
		{get, "/api/v2/notifications/policy", UserToken, s("read:notifications"), h.notificationPolicy},

		// Web Push subscriptions (push.go), one per token.
		{post, "/api/v1/push/subscription", UserToken, s("push"), h.createPush},
		{get, "/api/v1/push/subscription", UserToken, s("push"), h.getPush},
		{put, "/api/v1/push/subscription", UserToken, s("push"), h.updatePush},
		{del, "/api/v1/push/subscription", UserToken, s("push"), h.deletePush},
	}
}

// contentRoutes are the routes of what people read and do: statuses,
// media, timelines, notifications, search, accounts.
func (h *Handler) contentRoutes() []Route {
	const (
		get, post, patch = http.MethodGet, http.MethodPost, http.MethodPatch
		put, del         = http.MethodPut, http.MethodDelete
	)
	s := func(scopes ...string) []string { return scopes }
	readAccounts, writeAccounts := s("read:accounts"), s("write:accounts")
	readFollows, writeFollows := s("read:follows"), s("write:follows")
	readStatuses, writeStatuses := s("read:statuses"), s("write:statuses")
	readNotifications, writeNotifications := s("read:notifications"), s("write:notifications")
	return []Route{
		// Statuses (statuses.go, status_actions.go, polls.go).
		{post, "/api/v1/statuses", UserToken, writeStatuses, h.postStatus},
		{get, "/api/v1/statuses", Public, readStatuses, h.getStatuses},
		{get, "/api/v1/statuses/{id}", Public, readStatuses, h.getStatus},
		{put, "/api/v1/statuses/{id}", UserToken, writeStatuses, h.editStatus},
		{del, "/api/v1/statuses/{id}", UserToken, writeStatuses, h.deleteStatus},
		{get, "/api/v1/statuses/{id}/source", UserToken, readStatuses, h.statusSource},
		{get, "/api/v1/statuses/{id}/history", Public, readStatuses, h.statusHistory},
		{get, "/api/v1/statuses/{id}/context", Public, readStatuses, h.statusContext},
		{post, "/api/v1/statuses/{id}/favourite", UserToken, s("write:favourites"), h.statusAction(h.favourite)},
		{post, "/api/v1/statuses/{id}/unfavourite", UserToken, s("write:favourites"), h.statusAction(h.unfavourite)},
		{post, "/api/v1/statuses/{id}/reblog", UserToken, writeStatuses, h.statusAction(h.reblog)},
		{post, "/api/v1/statuses/{id}/unreblog", UserToken, writeStatuses, h.statusAction(h.unreblog)},
		{post, "/api/v1/statuses/{id}/bookmark", UserToken, s("write:bookmarks"), h.statusAction(h.bookmark)},
		{post, "/api/v1/statuses/{id}/unbookmark", UserToken, s("write:bookmarks"), h.statusAction(h.unbookmark)},
		{post, "/api/v1/statuses/{id}/pin", UserToken, writeAccounts, h.statusAction(h.pin)},
		{post, "/api/v1/statuses/{id}/unpin", UserToken, writeAccounts, h.statusAction(h.unpin)},
		{get, "/api/v1/statuses/{id}/favourited_by", Public, readAccounts, h.statusAccounts(h.favouritedBy)},
		{get, "/api/v1/statuses/{id}/reblogged_by", Public, readAccounts, h.statusAccounts(h.rebloggedBy)},
		{get, "/api/v1/statuses/{id}/quotes", Public, readStatuses, h.statusQuotes},
		{post, "/api/v1/statuses/{id}/quotes/{quoting_status_id}/revoke", UserToken, writeStatuses, h.revokeQuote},
		{get, "/api/v1/polls/{id}", Public, readStatuses, h.getPoll},
		{post, "/api/v1/polls/{id}/votes", UserToken, writeStatuses, h.votePoll},

		// Media (media.go).
		{post, "/api/v2/media", UserToken, s("write:media"), h.uploadMedia},
		{post, "/api/v1/media", UserToken, s("write:media"), h.uploadMedia},
		{get, "/api/v1/media/{id}", UserToken, s("write:media"), h.getMedia},
		{put, "/api/v1/media/{id}", UserToken, s("write:media"), h.updateMedia},
		{del, "/api/v1/media/{id}", UserToken, s("write:media"), h.deleteMedia},

		// Timelines and the lists of statuses (timelines.go, lists.go,
		// conversations.go).
		{get, "/api/v1/timelines/home", UserToken, readStatuses, h.homeTimeline},
		{get, "/api/v1/timelines/public", Public, readStatuses, h.publicTimeline},
		{get, "/api/v1/timelines/tag/{tag}", Public, readStatuses, h.tagTimeline},
		{get, "/api/v1/timelines/list/{id}", UserToken, s("read:lists"), h.listTimeline},
		{get, "/api/v1/favourites", UserToken, s("read:favourites"), h.favourites},
		{get, "/api/v1/bookmarks", UserToken, s("read:bookmarks"), h.bookmarks},
		{get, "/api/v1/lists", UserToken, s("read:lists"), h.lists},
		{post, "/api/v1/lists", UserToken, s("write:lists"), h.createList},
		{get, "/api/v1/lists/{id}", UserToken, s("read:lists"), h.getList},
		{put, "/api/v1/lists/{id}", UserToken, s("write:lists"), h.updateList},
		{del, "/api/v1/lists/{id}", UserToken, s("write:lists"), h.deleteList},
		{get, "/api/v1/lists/{id}/accounts", UserToken, s("read:lists"), h.listAccounts},
		{post, "/api/v1/lists/{id}/accounts", UserToken, s("write:lists"), h.changeListAccounts(true)},
		{del, "/api/v1/lists/{id}/accounts", UserToken, s("write:lists"), h.changeListAccounts(false)},
		{get, "/api/v1/conversations", UserToken, readStatuses, h.conversations},
		{del, "/api/v1/conversations/{id}", UserToken, s("write:conversations"), h.removeConversation},
		{post, "/api/v1/conversations/{id}/read", UserToken, s("write:conversations"), h.readConversation},

		// Notifications (notifications.go, notifications_v2.go).
		{get, "/api/v1/notifications", UserToken, readNotifications, h.notifications},
		{get, "/api/v1/notifications/unread_count", UserToken, readNotifications, h.unreadCount},
		{post, "/api/v1/notifications/clear", UserToken, writeNotifications, h.clearNotifications},
		{get, "/api/v1/notifications/{id}", UserToken, readNotifications, h.getNotification},
		{post, "/api/v1/notifications/{id}/dismiss", UserToken, writeNotifications, h.dismissNotification},
		{get, "/api/v2/notifications", UserToken, readNotifications, h.groupedNotifications},
		{get, "/api/v2/notifications/unread_count", UserToken, readNotifications, h.groupedUnreadCount},
		{get, "/api/v2/notifications/{group_key}", UserToken, readNotifications, h.notificationGroup},
		{get, "/api/v2/notifications/{group_key}/accounts", UserToken, readNotifications, h.notificationGroupAccounts},
		{post, "/api/v2/notifications/{group_key}/dismiss", UserToken, writeNotifications, h.dismissGroup},

		// Search (search.go).
		{get, "/api/v2/search", Public, s("read:search"), h.search},

		// Accounts (accounts.go, account_lists.go, profile.go).
		{get, "/api/v1/accounts/verify_credentials", UserToken, s("read:accounts", "profile"), h.verifyCredentials},
		{patch, "/api/v1/accounts/update_credentials", UserToken, writeAccounts, h.updateCredentials},
		{get, "/api/v1/accounts/lookup", Public, readAccounts, h.lookup},
		{get, "/api/v1/accounts/search", UserToken, s("read:accounts"), h.searchAccounts},
		{get, "/api/v1/accounts/relationships", UserToken, readFollows, h.relationships},
		{get, "/api/v1/accounts/familiar_followers", UserToken, readFollows, h.familiarFollowers},
		{get, "/api/v1/accounts/{id}", Public, readAccounts, h.getAccount},
		{get, "/api/v1/accounts/{id}/statuses", Public, readStatuses, h.accountStatuses},
		{get, "/api/v1/accounts/{id}/followers", Public, readAccounts, h.relationList(store.ListFollowers)},
		{get, "/api/v1/accounts/{id}/following", Public, readAccounts, h.relationList(store.ListFollowing)},
		{get, "/api/v1/accounts/{id}/featured_tags", Public, readAccounts, emptyList},
		{get, "/api/v1/accounts/{id}/lists", UserToken, s("read:lists"), h.accountLists},
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

		// GoToSocial's interaction requests (interaction_requests.go).
		{get, "/api/v1/interaction_requests", UserToken, readNotifications, h.interactionRequests},
		{get, "/api/v1/interaction_requests/{id}", UserToken, readNotifications, h.interactionRequestByID},
		{post, "/api/v1/interaction_requests/{id}/authorize", UserToken, writeStatuses, h.decideInteraction(true)},
		{post, "/api/v1/interaction_requests/{id}/reject", UserToken, writeStatuses, h.decideInteraction(false)},
		// Reports (reports.go).
		{post, "/api/v1/reports", UserToken, s("write:reports"), h.createReport},
	}
}

// pages outside the API that Mount adds: the missing avatar and header.
var imagePaths = []string{missingAvatar, missingHeader}
