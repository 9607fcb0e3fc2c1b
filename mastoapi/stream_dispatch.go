package mastoapi

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"herald/policy"
	"herald/store"
)

// dispatcher hands one batch of events to the connections, rendering each
// payload once per viewer (once for all on the public channels, whose
// payload is the status as nobody logged in sees it, as Mastodon's
// FanOutOnWriteService publishes its anonymous_payload there).
type dispatcher struct {
	h        *Handler
	ctx      context.Context
	statuses map[int64]*store.Status
	payloads map[payloadKey]string // "" for nothing to send
	hidden   map[payloadKey]bool   // a status hidden from a viewer by a block or mute
	lists    map[listKey]bool      // a list holds an account
	frames   map[frameKey][]byte   // WebSocket messages, encoded once
	// policy is the operator's moderation as the batch is sent (nil
	// without a Policy: tests of the API alone); unread means it could
	// not be read, and every status is held back (moderatedOut).
	policy *policy.Policy
	unread bool
}

type frameKey struct {
	payloadKey
	stream string
}

type payloadKey struct {
	event  int64
	viewer int64 // 0: as nobody logged in
}

type listKey struct {
	list    int64
	account string
}

// dispatch sends events to the connections they concern.
func (h *Handler) dispatch(ctx context.Context, events []store.APIEvent, conns []*streamConn) {
	d := &dispatcher{h: h, ctx: ctx, payloads: map[payloadKey]string{}, hidden: map[payloadKey]bool{}, lists: map[listKey]bool{},
		frames: map[frameKey][]byte{}}
	var ids []int64
	for _, e := range events {
		if e.StatusID != 0 {
			ids = append(ids, e.StatusID)
		}
	}
	if h.Policy != nil {
		p, err := h.Policy.Get(ctx)
		if err != nil {
			h.Logger.Error("streaming: could not read the federation policy; statuses are held back", "err", err)
		}
		d.policy, d.unread = p, err != nil
	}
	var err error
	if d.statuses, err = h.DB.StatusesByIDs(ctx, ids); err != nil {
		h.Logger.Error("streaming: could not read statuses", "err", err)
		return
	}
	for i := range events {
		e := &events[i]
		for _, c := range conns {
			for _, s := range c.subscriptions() {
				if !d.matches(e, c, s) {
					continue
				}
				if p := d.payload(e, c, s); p != "" {
					c.send(streamMessage{event: e.Event, payload: p, raw: d.frame(e, c, s, p)})
				}
			}
		}
	}
}

// matches says whether an event belongs on a subscription of a
// connection: its channel, its owner, its tag or list, media only.
func (d *dispatcher) matches(e *store.APIEvent, c *streamConn, s *subscription) bool {
	st := d.statuses[e.StatusID]
	if e.ActorID != 0 {
		if e.ActorID != c.viewer.ID {
			return false
		}
		switch {
		case e.Stream == "direct":
			return s.channel == "direct"
		case e.Stream != "user":
			return false
		case e.Event == "notification":
			return s.channel == "user:notification" || s.channel == "user" && c.notifications
		case st != nil && d.moderatedOut(st, false):
			return false
		case s.channel == "user":
			return true
		case s.channel == "list":
			// Mastodon's FanOutOnWriteService fans a direct message out to
			// the mentioned followers' homes, never to lists.
			return st != nil && st.Visibility != "direct" && d.inList(s.list, st.Author)
		}
		return false
	}
	if st == nil || d.moderatedOut(st, true) {
		return false
	}
	if s.media() && !st.HasMedia {
		return false
	}
	switch s.channel {
	case "public", "public:media":
		return e.Stream == "public"
	case "public:local", "public:local:media":
		return e.Stream == "public:local"
	case "public:remote", "public:remote:media":
		return e.Stream == "public:remote"
	case "hashtag":
		return e.Stream == "hashtag" && e.Detail == s.tag
	case "hashtag:local":
		return e.Stream == "hashtag" && e.Detail == s.tag && st.LocalActorID != 0
	}
	return false
}

// moderatedOut says whether the operator's moderation keeps st off a
// stream, as the timelines leave it out of their pages (moderated): a
// suspended account's or domain's status from every stream, and on the
// public and hashtag streams (public) a limited one's too, as Mastodon's
// FanOutOnWriteService sends a silenced account's posts to no public
// stream. A policy that could not be read holds every status back.
func (d *dispatcher) moderatedOut(st *store.Status, public bool) bool {
	if d.unread {
		return true
	}
	return d.policy != nil && hiddenBy(d.policy, st, public)
}

// inList says whether a list holds an account (Mastodon's FeedManager
// pushes a status to the lists that hold its author, or its booster).
func (d *dispatcher) inList(list int64, account string) bool {
	k := listKey{list, account}
	in, ok := d.lists[k]
	if !ok {
		accounts, err := d.h.DB.ListAccounts(d.ctx, list)
		if err != nil {
			d.h.Logger.Error("streaming: could not read a list", "err", err)
		}
		in = slices.Contains(accounts, account)
		d.lists[k] = in
	}
	return in
}

// frame is the WebSocket message of an event on a subscription, as
// Mastodon's streamToWs writes it: {"stream": [...], "event": ...,
// "payload": "<the payload>"}; the same for every connection that gets
// the same payload on the same stream.
func (d *dispatcher) frame(e *store.APIEvent, c *streamConn, s *subscription, p string) []byte {
	k := frameKey{payloadKey{e.ID, c.viewer.ID}, strings.Join(s.stream, "\x00")}
	if s.filtered() {
		k.viewer = 0
	}
	b, ok := d.frames[k]
	if !ok {
		b, _ = json.Marshal(struct {
			Stream  []string `json:"stream"`
			Event   string   `json:"event"`
			Payload string   `json:"payload"`
		}{s.stream, e.Event, p})
		d.frames[k] = b
	}
	return b
}

// payload is what an event sends on a subscription, "" for nothing: the
// status id of a delete (Mastodon sends it as a bare string), the Status
// of an update or status.update (without what the viewer blocks or
// mutes), the Notification, the Conversation.
func (d *dispatcher) payload(e *store.APIEvent, c *streamConn, s *subscription) string {
	if e.Event == "delete" {
		return ID(e.StatusID)
	}
	viewer := c.viewer
	if s.filtered() {
		viewer = nil // the public channels' anonymous payload
	}
	k := payloadKey{e.ID, 0}
	if viewer != nil {
		k.viewer = viewer.ID
	}
	p, ok := d.payloads[k]
	if !ok {
		p = d.render(e, viewer)
		d.payloads[k] = p
	}
	if p != "" && (e.Event == "update" || e.Event == "status.update") && d.hiddenFrom(e, c.viewer) {
		return ""
	}
	return p
}

// render renders an event's entity as viewer sees it.
func (d *dispatcher) render(e *store.APIEvent, viewer *store.Actor) string {
	var v any
	var err error
	switch e.Event {
	case "update", "status.update":
		st := d.statuses[e.StatusID]
		if st == nil {
			return ""
		}
		var list []Status
		if list, err = d.h.RenderStatuses(d.ctx, viewer, []*store.Status{st}); err == nil && len(list) == 1 {
			v = list[0]
		}
	case "notification":
		var n *store.Notification
		if n, err = d.h.DB.NotificationByID(d.ctx, e.ActorID, e.NotificationID); err == nil {
			var list []Notification
			if list, err = d.h.RenderNotifications(d.ctx, viewer, []*store.Notification{n}); err == nil && len(list) == 1 {
				v = list[0]
			}
		}
	case "conversation":
		id, _ := strconv.ParseInt(e.Detail, 10, 64)
		var cv *store.Conversation
		if cv, err = d.h.DB.ConversationByID(d.ctx, e.ActorID, id); err == nil {
			var list []Conversation
			call := &Call{R: (&http.Request{}).WithContext(d.ctx), Actor: viewer, h: d.h}
			if list, err = d.h.renderConversations(call, []*store.Conversation{cv}); err == nil && len(list) == 1 {
				v = list[0]
			}
		}
	}
	if err != nil && err != store.ErrNotFound {
		d.h.Logger.Error("streaming: could not render an event", "event", e.Event, "err", err)
	}
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// hiddenFrom says whether the viewer blocks or mutes the status's author
// (or booster, or the boosted author), an account it mentions, or the
// author's domain: what Mastodon's streaming server checks before it
// sends a status on a public channel (streamFrom, needsFiltering), and
// what its home feeds leave out when they are filled.
func (d *dispatcher) hiddenFrom(e *store.APIEvent, viewer *store.Actor) bool {
	st := d.statuses[e.StatusID]
	if st == nil {
		return false
	}
	k := payloadKey{st.ID, viewer.ID}
	hidden, ok := d.hidden[k]
	if ok {
		return hidden
	}
	targets := append([]string{st.Author}, mentioned(st.Body)...)
	if st.ReblogOf != 0 {
		if inner, err := d.h.DB.StatusByID(d.ctx, st.ReblogOf); err == nil {
			targets = append(targets, inner.Author)
		}
	}
	rel, err := d.h.DB.Relations(d.ctx, viewer.ID, targets)
	if err != nil {
		d.h.Logger.Error("streaming: could not read relations", "err", err)
	}
	for _, r := range rel {
		hidden = hidden || r.Blocking || r.DomainBlocking || r.Muting
	}
	d.hidden[k] = hidden
	return hidden
}

// mentioned is the ids of the accounts a status's object mentions.
func mentioned(body string) []string {
	var obj struct {
		Tag json.RawMessage `json:"tag"`
	}
	if json.Unmarshal([]byte(body), &obj) != nil || len(obj.Tag) == 0 {
		return nil
	}
	var tags []struct {
		Type string `json:"type"`
		Href string `json:"href"`
	}
	if json.Unmarshal(obj.Tag, &tags) != nil {
		var one struct {
			Type string `json:"type"`
			Href string `json:"href"`
		}
		if json.Unmarshal(obj.Tag, &one) != nil {
			return nil
		}
		tags = append(tags, one)
	}
	var out []string
	for _, t := range tags {
		if t.Type == "Mention" && t.Href != "" {
			out = append(out, t.Href)
		}
	}
	return out
}
