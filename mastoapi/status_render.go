package mastoapi

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"herald/federation"
	"herald/outbox/compose"
	"herald/store"
)

// RenderStatuses is the Status entities of list as viewer (nil: nobody
// logged in) sees them, in order: boosts with their status, the viewer's
// flags, polls, reactions. A status whose author Herald cannot show (its
// document gone), a boost whose status Herald lacks and a deleted one are
// left out. The streaming API renders its update and status.update
// events with it, as the REST answers are.
func (h *Handler) RenderStatuses(ctx context.Context, viewer *store.Actor, list []*store.Status) ([]Status, error) {
	return h.render(&renderer{h: h, ctx: ctx, viewer: viewer, accounts: map[string]*Account{}}, list)
}

// render is RenderStatuses with the renderer r.
func (h *Handler) render(r *renderer, list []*store.Status) ([]Status, error) {
	if r.viewer != nil {
		r.viewerIRI = h.Instance.ActorID(r.viewer.Name)
	}
	quoted, err := r.loadQuotes(list)
	if err != nil {
		return nil, err
	}
	if err := r.load(append(list[:len(list):len(list)], quoted...)); err != nil {
		return nil, err
	}
	out := make([]Status, 0, len(list))
	for _, s := range list {
		st, ok, err := r.status(s, true)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, st)
		}
	}
	return out, nil
}

// renderStatus is one status as RenderStatuses renders it, or
// ErrNotFound.
func (h *Handler) renderStatus(ctx context.Context, viewer *store.Actor, s *store.Status) (Status, error) {
	list, err := h.RenderStatuses(ctx, viewer, []*store.Status{s})
	if err != nil {
		return Status{}, err
	}
	if len(list) == 0 {
		return Status{}, ErrNotFound
	}
	return list[0], nil
}

// renderer renders one answer's statuses, loading what they share in a
// few queries.
type renderer struct {
	h         *Handler
	ctx       context.Context
	viewer    *store.Actor
	viewerIRI string
	accounts  map[string]*Account // nil entries: not shown
	byID      map[int64]*store.Status
	replyIDs  map[string]int64
	polls     map[int64]*store.Poll
	reactions map[int64][]store.Reaction
	objs      map[int64]map[string]any      // each status's object, parsed once
	uploads   map[string]store.FocusedMedia // the local statuses' attachments
	votes     map[int64][]int
	fav, reb  map[int64]bool
	book, pin map[int64]bool
	// quotes: what the statuses quote, the quoted statuses' ids by IRI,
	// how often each is quoted, and how deep in quotes the renderer is.
	quotes      map[int64]*store.StatusQuote
	quotedIDs   map[string]int64
	quoteCounts map[string]int
	quoteHidden map[int64]bool // quoted statuses moderation hides
	// source: the answer to a delete, for a redraft: a quote not accepted
	// shows its quoted status too (Mastodon's source_requested).
	source     bool
	quotedRels map[string]*store.Relation // the viewer's with the quoted authors
	depth      int
}

// load fetches what the statuses need: the boosted statuses, the
// statuses they answer, polls, reactions and the viewer's flags.
func (r *renderer) load(list []*store.Status) error {
	db, ctx := r.h.DB, r.ctx
	r.byID = map[int64]*store.Status{}
	var want []int64
	for _, s := range list {
		r.byID[s.ID] = s
		if s.ReblogOf != 0 {
			want = append(want, s.ReblogOf)
		}
	}
	boosted, err := db.StatusesByIDs(ctx, want)
	if err != nil {
		return err
	}
	var ids []int64
	var replies []string
	for id, s := range boosted {
		r.byID[id] = s
	}
	r.objs = map[int64]map[string]any{}
	var files []string
	for id, s := range r.byID {
		ids = append(ids, id)
		if s.InReplyTo != "" {
			replies = append(replies, s.InReplyTo)
		}
		obj := map[string]any{}
		if s.Body != "" {
			json.Unmarshal([]byte(s.Body), &obj)
		}
		r.objs[id] = obj
		files = append(files, r.h.localFiles(s, obj)...)
	}
	if r.uploads, err = db.MediaByFiles(ctx, files); err != nil {
		return err
	}
	if r.replyIDs, err = db.StatusIDsByIRI(ctx, replies); err != nil {
		return err
	}
	if err := r.preloadAccounts(); err != nil {
		return err
	}
	if r.polls, err = db.PollsOf(ctx, ids); err != nil {
		return err
	}
	if r.reactions, err = db.ReactionsOf(ctx, ids, r.viewerIRI); err != nil {
		return err
	}
	if r.viewer == nil {
		return nil
	}
	if r.fav, err = db.FavouritedAmong(ctx, r.viewerIRI, ids); err != nil {
		return err
	}
	if r.reb, err = db.RebloggedAmong(ctx, r.viewerIRI, ids); err != nil {
		return err
	}
	if r.book, err = db.BookmarkedAmong(ctx, r.viewer.ID, ids); err != nil {
		return err
	}
	if r.pin, err = db.PinnedAmong(ctx, ids); err != nil {
		return err
	}
	var pollIDs []int64
	for id := range r.polls {
		pollIDs = append(pollIDs, id)
	}
	r.votes, err = db.VotesOf(ctx, r.viewerIRI, pollIDs)
	return err
}

// account is the Account of an actor id, shown once an answer.
func (r *renderer) account(iri string) (*Account, error) {
	if a, ok := r.accounts[iri]; ok {
		return a, nil
	}
	ref, err := r.h.refByIRI(r.ctx, iri, false)
	if errors.Is(err, ErrNotFound) || errors.Is(err, store.ErrNotFound) {
		r.accounts[iri] = nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	a, err := r.h.account(r.ctx, ref)
	if err != nil {
		return nil, err
	}
	r.accounts[iri] = &a
	return &a, nil
}

// status renders s; ok is false when it is not shown.
func (r *renderer) status(s *store.Status, outer bool) (Status, bool, error) {
	if !s.DeletedAt.IsZero() {
		return Status{}, false, nil
	}
	acc, err := r.account(s.Author)
	if err != nil || acc == nil {
		return Status{}, false, err
	}
	st := Status{
		ID: ID(s.ID), URI: s.IRI, CreatedAt: Timestamp(s.CreatedAt), Account: *acc, Content: s.Content, Visibility: s.Visibility,
		Sensitive: s.Sensitive, SpoilerText: s.SpoilerText, MediaAttachments: []MediaAttachment{}, Mentions: []Mention{},
		Tags: []StatusTag{}, Emojis: []CustomEmoji{}, ReblogsCount: s.ReblogsCount, FavouritesCount: s.FavouritesCount,
		RepliesCount: s.RepliesCount, EditedAt: Timestamp(s.EditedAt),
	}
	if s.URL != "" {
		u := s.URL
		st.URL = &u
	} else {
		u := s.IRI
		st.URL = &u
	}
	if s.ReblogIRI != "" {
		if !outer {
			return Status{}, false, nil
		}
		inner := r.byID[s.ReblogOf]
		if inner == nil {
			return Status{}, false, nil // not fetched yet
		}
		in, ok, err := r.status(inner, false)
		if err != nil || !ok {
			return Status{}, false, err
		}
		st.Reblog = &in
		st.Content, st.Sensitive, st.SpoilerText = "", false, ""
		st.ReblogsCount, st.FavouritesCount, st.RepliesCount = 0, 0, 0
		r.flags(&st, s)
		return st, true, nil
	}
	if s.Language != "" {
		lang := s.Language
		st.Language = &lang
	}
	if s.InReplyTo != "" {
		if id, ok := r.replyIDs[s.InReplyTo]; ok {
			rid := ID(id)
			st.InReplyToID = &rid
			if parent := r.byID[id]; parent != nil {
				s.InReplyToAuthor = parent.Author
			}
		}
		if s.InReplyToAuthor != "" && st.InReplyToID != nil {
			if aid, err := r.h.DB.AccountID(r.ctx, s.InReplyToAuthor, r.h.Now()); err == nil {
				v := ID(aid)
				st.InReplyToAccountID = &v
			}
		}
	}
	obj, err := r.object(s)
	if err != nil {
		return Status{}, false, err
	}
	st.MediaAttachments = r.h.attachments(s, obj, r.uploads)
	if st.Mentions, err = r.mentions(obj); err != nil {
		return Status{}, false, err
	}
	st.Tags, st.Emojis = r.h.tags(obj), emojis(obj)
	if p := r.polls[s.ID]; p != nil {
		st.Poll = r.poll(s, p, obj)
	}
	if list := r.reactions[s.ID]; len(list) > 0 {
		st.Pleroma = &PleromaStatus{EmojiReactions: []EmojiReaction{}}
		for _, x := range list {
			e := EmojiReaction{Name: x.Emoji, Count: x.Count, Me: x.Me}
			if x.URL != "" {
				u := x.URL
				e.URL = &u
			}
			st.Pleroma.EmojiReactions = append(st.Pleroma.EmojiReactions, e)
		}
	}
	if err := r.setQuote(&st, s, obj); err != nil {
		return Status{}, false, err
	}
	r.flags(&st, s)
	return st, true, nil
}

// object is s's object as load parsed it, or parsed now (with its
// uploads) for a status load did not see.
func (r *renderer) object(s *store.Status) (map[string]any, error) {
	if obj, ok := r.objs[s.ID]; ok {
		return obj, nil
	}
	obj := map[string]any{}
	if s.Body != "" {
		json.Unmarshal([]byte(s.Body), &obj)
	}
	uploads, err := r.h.DB.MediaByFiles(r.ctx, r.h.localFiles(s, obj))
	if err != nil {
		return nil, err
	}
	if r.objs == nil {
		r.objs, r.uploads = map[int64]map[string]any{}, map[string]store.FocusedMedia{}
	}
	r.objs[s.ID] = obj
	for f, m := range uploads {
		r.uploads[f] = m
	}
	return obj, nil
}

// flags sets the viewer's flags on a rendered status.
func (r *renderer) flags(st *Status, s *store.Status) {
	if r.viewer == nil {
		return
	}
	id := s.ID
	if s.ReblogOf != 0 {
		id = s.ReblogOf
	}
	f, rb, b, m := r.fav[id], r.reb[id], r.book[id], false
	st.Favourited, st.Reblogged, st.Bookmarked, st.Muted = &f, &rb, &b, &m
	st.Filtered = []any{}
	if s.LocalActorID == r.viewer.ID && s.ReblogIRI == "" && (s.Visibility == "public" || s.Visibility == "unlisted") {
		p := r.pin[s.ID]
		st.Pinned = &p
	}
}

// poll renders a status's poll as the viewer sees it.
func (r *renderer) poll(s *store.Status, p *store.Poll, obj map[string]any) *Poll {
	now := r.h.Now()
	out := &Poll{ID: ID(s.ID), ExpiresAt: Timestamp(p.ExpiresAt), Multiple: p.Multiple, VotersCount: p.VotersCount, Emojis: []CustomEmoji{},
		Expired: !p.ClosedAt.IsZero() || (!p.ExpiresAt.IsZero() && !now.Before(p.ExpiresAt))}
	for _, o := range p.Options {
		v := o.Votes
		out.VotesCount += v
		out.Options = append(out.Options, PollOption{Title: o.Title, VotesCount: &v})
	}
	if r.viewer != nil {
		own := r.votes[s.ID]
		if own == nil {
			own = []int{}
		}
		voted := len(own) > 0 || s.LocalActorID == r.viewer.ID
		out.Voted, out.OwnVotes = &voted, &own
	}
	return out
}

// mentions are the accounts a post's Mention tags name.
func (r *renderer) mentions(obj map[string]any) ([]Mention, error) {
	out := []Mention{}
	seen := map[string]bool{}
	for _, t := range asList(obj["tag"]) {
		m, ok := t.(map[string]any)
		if !ok || federation.FirstString(m["type"]) != "Mention" {
			continue
		}
		href := federation.IDOf(m["href"])
		if !webURL(href) || seen[href] {
			continue
		}
		seen[href] = true
		user, host, _ := strings.Cut(strings.TrimPrefix(federation.FirstString(m["name"]), "@"), "@")
		if user == "" {
			user = lastSegment(href)
		}
		if host == "" {
			host, _ = store.HostOf(href)
		}
		acct := user + "@" + host
		page := href
		if name, ok := r.h.Instance.LocalName(href); ok && href == r.h.Instance.ActorID(name) {
			acct, page = name, r.h.Instance.ProfileURL(name)
		}
		id, err := r.h.DB.AccountID(r.ctx, href, r.h.Now())
		if err != nil {
			return nil, err
		}
		out = append(out, Mention{ID: ID(id), Username: user, URL: page, Acct: acct})
	}
	return out, nil
}

// tags are a post's hashtags, linked to this server's tag pages.
func (h *Handler) tags(obj map[string]any) []StatusTag {
	out := []StatusTag{}
	seen := map[string]bool{}
	for _, t := range asList(obj["tag"]) {
		m, ok := t.(map[string]any)
		if !ok || federation.FirstString(m["type"]) != "Hashtag" {
			continue
		}
		name := strings.TrimPrefix(federation.FirstString(m["name"]), "#")
		norm := compose.NormalizeHashtag(name)
		if norm == "" || seen[norm] {
			continue
		}
		seen[norm] = true
		out = append(out, StatusTag{Name: strings.ToLower(name), URL: h.Instance.TagURL(norm)})
	}
	return out
}

// emojis are the custom emoji a post's Emoji tags define.
func emojis(obj map[string]any) []CustomEmoji {
	out := []CustomEmoji{}
	for _, t := range asList(obj["tag"]) {
		m, ok := t.(map[string]any)
		if !ok || federation.FirstString(m["type"]) != "Emoji" {
			continue
		}
		icon, _ := m["icon"].(map[string]any)
		u := federation.IDOf(icon["url"])
		code := strings.Trim(federation.FirstString(m["name"]), ":")
		if !webURL(u) || code == "" {
			continue
		}
		out = append(out, CustomEmoji{Shortcode: code, URL: u, StaticURL: u})
	}
	return out
}
