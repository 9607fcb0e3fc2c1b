package mastoapi

import (
	"net/http"
	"slices"
)

// preferences serves GET /api/v1/preferences: Mastodon's defaults, which
// Herald does not let anyone change yet.
func (h *Handler) preferences(c *Call) error {
	return c.JSON(map[string]any{
		"posting:default:visibility":   "public",
		"posting:default:sensitive":    false,
		"posting:default:language":     nil,
		"posting:default:quote_policy": "public",
		"reading:expand:media":         "default",
		"reading:expand:spoilers":      false,
		"reading:autoplay:gifs":        false,
	})
}

// markerTimelines are the timelines a marker may be kept for.
var markerTimelines = []string{"home", "notifications"}

// getMarkers serves GET /api/v1/markers?timeline[]=: the saved markers of
// the timelines asked for (all when none is named).
func (h *Handler) getMarkers(c *Call) error {
	saved, err := h.DB.Markers(c.Ctx(), c.Actor.ID)
	if err != nil {
		return err
	}
	want := c.Params.List("timeline")
	out := map[string]any{}
	for name, m := range saved {
		if len(want) == 0 || slices.Contains(want, name) {
			out[name] = map[string]any{"last_read_id": m.LastReadID, "version": m.Version, "updated_at": Time(m.UpdatedAt)}
		}
	}
	return c.JSON(out)
}

// setMarkers serves POST /api/v1/markers: home[last_read_id] and
// notifications[last_read_id], and answers the markers saved.
func (h *Handler) setMarkers(c *Call) error {
	set := map[string]string{}
	for _, name := range markerTimelines {
		if id := c.Params.Get(name + "[last_read_id]"); id != "" {
			set[name] = id
		}
	}
	if len(set) == 0 {
		return Errorf(http.StatusBadRequest, "param is missing or the value is empty: home[last_read_id] or notifications[last_read_id]")
	}
	if err := h.DB.SetMarkers(c.Ctx(), c.Actor.ID, set); err != nil {
		return err
	}
	saved, err := h.DB.Markers(c.Ctx(), c.Actor.ID)
	if err != nil {
		return err
	}
	out := map[string]any{}
	for name := range set {
		m := saved[name]
		out[name] = map[string]any{"last_read_id": m.LastReadID, "version": m.Version, "updated_at": Time(m.UpdatedAt)}
	}
	return c.JSON(out)
}

// emptyList answers [] for a list Herald keeps nothing in.
func emptyList(c *Call) error { return c.Empty() }

// emptyObject answers {}.
func emptyObject(c *Call) error { return c.JSON(map[string]any{}) }

// notificationPolicy serves GET /api/v2/notifications/policy: Mastodon's
// default policy (accept everything, nothing filtered), which Herald has
// no filtering to change.
func (h *Handler) notificationPolicy(c *Call) error {
	return c.JSON(map[string]any{
		"for_not_following": "accept", "for_not_followers": "accept", "for_new_accounts": "accept",
		"for_private_mentions": "accept", "for_limited_accounts": "filter",
		"summary": map[string]any{"pending_requests_count": 0, "pending_notifications_count": 0},
	})
}

// domainBlocks serves GET /api/v1/domain_blocks: the domains the actor
// blocks (herald actor block-domain, the app API), as a list of names.
func (h *Handler) domainBlocks(c *Call) error {
	list, err := h.DB.ActorDomainBlocks(c.Ctx(), c.Actor.ID)
	if err != nil {
		return err
	}
	out := []string{}
	for _, b := range list {
		out = append(out, b.Target)
	}
	return c.JSON(out)
}
