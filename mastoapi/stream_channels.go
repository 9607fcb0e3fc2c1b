package mastoapi

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"herald/outbox/compose"
	"herald/store"
)

// The streaming API's channels, as Mastodon's streaming server names and
// checks them (mastodon/mastodon streaming/index.js: PUBLIC_CHANNELS,
// channelNameFromPath, checkScopes, channelNameToIds,
// streamNameFromChannelName).

// publicChannels need no scope (but, as in Mastodon, a valid token).
var publicChannels = []string{"public", "public:media", "public:local", "public:local:media",
	"public:remote", "public:remote:media", "hashtag", "hashtag:local"}

// streamPaths are the server-sent events endpoints and their channels
// (only_media=true picks the :media channel of a public one).
var streamPaths = map[string]string{
	"/api/v1/streaming/user":              "user",
	"/api/v1/streaming/user/notification": "user:notification",
	"/api/v1/streaming/public":            "public",
	"/api/v1/streaming/public/local":      "public:local",
	"/api/v1/streaming/public/remote":     "public:remote",
	"/api/v1/streaming/hashtag":           "hashtag",
	"/api/v1/streaming/hashtag/local":     "hashtag:local",
	"/api/v1/streaming/direct":            "direct",
	"/api/v1/streaming/list":              "list",
}

// streamError is a refusal with Mastodon's streaming status codes: 400
// (RequestError) or 401 (AuthenticationError), streaming/errors.js.
type streamError struct {
	status int
	msg    string
}

func (e *streamError) Error() string { return e.msg }

func requestError(msg string) error { return &streamError{http.StatusBadRequest, msg} }
func authError(msg string) error    { return &streamError{http.StatusUnauthorized, msg} }

// errorStatus is err's status and message as Mastodon's
// extractStatusAndMessage shows them: anything not a refusal is 500
// without its detail.
func errorStatus(err error) (int, string) {
	var e *streamError
	if errors.As(err, &e) {
		return e.status, e.msg
	}
	return http.StatusInternalServerError, "An unexpected error occurred"
}

// subscription is one channel a connection streams.
type subscription struct {
	channel string   // user, user:notification, public, public:local:media, hashtag, list, direct, ...
	stream  []string // what each message's "stream" says: [channel], or [channel, tag or list id] as asked
	tag     string   // hashtag channels: the normalized tag
	list    int64    // list: its id
}

// key identifies a subscription within a connection (Mastodon keys them
// by their Redis channel ids).
func (s *subscription) key() string {
	return s.channel + "\x00" + s.tag + "\x00" + strconv.FormatInt(s.list, 10)
}

// media says whether the channel is a public one of statuses with media
// only.
func (s *subscription) media() bool { return strings.HasSuffix(s.channel, ":media") }

// filtered says whether a status on the channel is held to the viewer's
// blocks and mutes when it streams (Mastodon's needsFiltering): the public
// and hashtag channels, which everyone's statuses reach. The user, list
// and direct channels are filtered when they are filled (package
// timeline), and again here for mutes made since (see streamConn.wants).
func (s *subscription) filtered() bool { return slices.Contains(publicChannels, s.channel) }

// checkScopes allows a channel for the connection's token as Mastodon's
// checkScopes does: public channels for any token; user:notification for
// read or read:notifications; the others for read or read:statuses.
func checkScopes(scopes []string, channel string) error {
	if slices.Contains(publicChannels, channel) {
		return nil
	}
	need := "read:statuses"
	if channel == "user:notification" {
		need = "read:notifications"
	}
	if slices.Contains(scopes, "read") || slices.Contains(scopes, need) {
		return nil
	}
	return authError("Access token does not have the required scopes")
}

// newSubscription checks and makes the subscription of a channel with
// its parameters (tag, list), as channelNameToIds does.
func (h *Handler) newSubscription(ctx context.Context, viewer *store.Actor, scopes []string, channel, tag, list string) (*subscription, error) {
	if err := checkScopes(scopes, channel); err != nil {
		return nil, err
	}
	s := &subscription{channel: channel, stream: []string{channel}}
	switch channel {
	case "user", "user:notification", "direct", "public", "public:media", "public:local", "public:local:media",
		"public:remote", "public:remote:media":
	case "hashtag", "hashtag:local":
		if tag == "" {
			return nil, requestError("Missing tag name parameter")
		}
		s.tag, s.stream = compose.NormalizeHashtag(tag), []string{channel, tag}
	case "list":
		if list == "" {
			return nil, requestError("Missing list name parameter")
		}
		id, ok := ParseID(list)
		if !ok {
			return nil, authError("Not authorized to stream this list")
		}
		if _, err := h.DB.ListByID(ctx, viewer.ID, id); errors.Is(err, store.ErrNotFound) {
			return nil, authError("Not authorized to stream this list")
		} else if err != nil {
			return nil, err
		}
		s.list, s.stream = id, []string{channel, list}
	default:
		return nil, requestError("Unknown stream type")
	}
	return s, nil
}
