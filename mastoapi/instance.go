package mastoapi

import (
	"herald/outbox"
	"herald/outbox/media"
)

// APIVersion is what /api/v2/instance says in api_versions.mastodon.
// Mastodon 4.3 says 2, and apps that see 2 switch to grouped
// notifications (/api/v2/notifications) and other 4.3 behaviour; Herald
// serves grouped notifications (notifications_v2.go), so it says 2 too.
const APIVersion = 2

// compatVersion is the Mastodon version Herald's API matches, as apps
// read the version field: "4.2.0 (compatible; Herald X)", the form other
// servers (Takahē, Iceshrimp, Hollo) use, which apps parse for its
// leading version.
const compatVersion = "4.2.0"

// Limits Herald shows apps: what its outbox and media checks enforce.
const (
	maxCharacters = 5000 // compose's limit
	urlChars      = 23   // characters a link counts for, as Mastodon counts them
	pollOptions   = 4
	pollOptionLen = 50
	pollMinExpiry = 300
	pollMaxExpiry = 2629746
)

// mediaTypes are the types media.Probe accepts.
var mediaTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp", "video/mp4", "video/webm", "video/ogg", "audio/mpeg", "audio/ogg", "audio/mp4"}

func (h *Handler) version() string {
	v := h.Version
	if v == "" {
		v = "dev"
	}
	return compatVersion + " (compatible; Herald " + v + ")"
}

// statusesConfig and its neighbours are the configuration apps read to
// size their composers.
func statusesConfig() map[string]any {
	return map[string]any{"max_characters": maxCharacters, "max_media_attachments": outbox.MaxAttachments, "characters_reserved_per_url": urlChars}
}

func mediaConfig() map[string]any {
	return map[string]any{
		"supported_mime_types": mediaTypes, "image_size_limit": media.ImageLimit, "image_matrix_limit": media.PixelLimit,
		"video_size_limit": media.VideoLimit, "video_frame_rate_limit": 120, "video_matrix_limit": media.PixelLimit,
		"description_limit": outbox.MaxAltText,
	}
}

func pollsConfig() map[string]any {
	return map[string]any{"max_options": pollOptions, "max_characters_per_option": pollOptionLen, "min_expiration": pollMinExpiry, "max_expiration": pollMaxExpiry}
}

// instanceV2 serves GET /api/v2/instance.
func (h *Handler) instanceV2(c *Call) error {
	users, err := h.DB.CountActors(c.Ctx())
	if err != nil {
		return err
	}
	base := h.Instance.Base()
	return c.JSON(map[string]any{
		"domain":       h.Instance.Domain,
		"title":        h.Instance.Domain,
		"version":      h.version(),
		"source_url":   base + "/status",
		"description":  "A Herald server: ActivityPub for a small instance.",
		"usage":        map[string]any{"users": map[string]any{"active_month": users}},
		"thumbnail":    map[string]any{"url": base + missingHeader},
		"icon":         []any{},
		"languages":    []string{"en"},
		"api_versions": map[string]any{"mastodon": APIVersion},
		"configuration": map[string]any{
			"urls":              map[string]any{"streaming": streamingURL(base), "status": nil, "about": base + "/status", "privacy_policy": nil, "terms_of_service": nil},
			"vapid":             map[string]any{"public_key": h.vapidPublicKey(c.Ctx())},
			"accounts":          map[string]any{"max_featured_tags": 0, "max_pinned_statuses": outbox.MaxPinned, "max_profile_fields": maxFields, "profile_field_name_limit": maxFieldChars, "profile_field_value_limit": maxFieldChars},
			"statuses":          statusesConfig(),
			"media_attachments": mediaConfig(),
			"polls":             pollsConfig(),
			"translation":       map[string]any{"enabled": false},
		},
		"registrations": map[string]any{"enabled": false, "approval_required": false, "message": nil, "url": nil},
		"contact":       map[string]any{"email": "", "account": nil},
		"rules":         []any{},
	})
}

// instanceV1 serves GET /api/v1/instance, the older shape some apps
// still read first.
func (h *Handler) instanceV1(c *Call) error {
	users, err := h.DB.CountActors(c.Ctx())
	if err != nil {
		return err
	}
	posts, err := h.DB.CountLocalPosts(c.Ctx())
	if err != nil {
		return err
	}
	base := h.Instance.Base()
	return c.JSON(map[string]any{
		"uri":               h.Instance.Domain,
		"title":             h.Instance.Domain,
		"short_description": "A Herald server: ActivityPub for a small instance.",
		"description":       "",
		"email":             "",
		"version":           h.version(),
		"urls":              map[string]any{"streaming_api": streamingURL(base)},
		"stats":             map[string]any{"user_count": users, "status_count": posts, "domain_count": 0},
		"thumbnail":         base + missingHeader,
		"languages":         []string{"en"},
		"registrations":     false,
		"approval_required": false,
		"invites_enabled":   false,
		"configuration": map[string]any{
			"accounts":          map[string]any{"max_featured_tags": 0},
			"statuses":          statusesConfig(),
			"media_attachments": mediaConfig(),
			"polls":             pollsConfig(),
		},
		"contact_account": nil,
		"rules":           []any{},
	})
}

// streamingURL is where apps are told the streaming API is: the same
// host, ws(s) (stream_http.go serves it).
func streamingURL(base string) string {
	if len(base) > 5 && base[:5] == "https" {
		return "wss" + base[5:]
	}
	return "ws" + base[4:]
}
