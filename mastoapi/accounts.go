package mastoapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"herald/federation/as"
	"herald/host"
	"herald/outbox"
	"herald/store"
)

// verifyCredentials serves GET /api/v1/accounts/verify_credentials.
func (h *Handler) verifyCredentials(c *Call) error {
	acc, err := h.credentialAccount(c.Ctx(), c.Actor)
	if err != nil {
		return err
	}
	return c.JSON(acc)
}

// getAccount serves GET /api/v1/accounts/:id.
func (h *Handler) getAccount(c *Call) error {
	ref, err := h.refByID(c.Ctx(), c.param("id"))
	if err != nil {
		return err
	}
	acc, err := h.account(c.Ctx(), ref)
	if err != nil {
		return err
	}
	return c.JSON(acc)
}

// lookup serves GET /api/v1/accounts/lookup?acct=: a local account by
// name, or a remote one by user@host among those Herald knows, or, for a
// caller with a token, through WebFinger (Mastodon answers only what it
// knows; Herald knows few accounts, so it asks).
func (h *Handler) lookup(c *Call) error {
	acct := strings.TrimPrefix(strings.TrimSpace(c.Params.Get("acct")), "@")
	if acct == "" {
		return Errorf(http.StatusBadRequest, "param is missing or the value is empty: acct")
	}
	ref, err := h.resolveAcct(c.Ctx(), acct, c.Actor != nil)
	if err != nil {
		return err
	}
	acc, err := h.account(c.Ctx(), ref)
	if err != nil {
		return err
	}
	return c.JSON(acc)
}

// resolveAcct finds the account of user or user@host: local, known, or
// (webfinger set) looked up through WebFinger and fetched.
func (h *Handler) resolveAcct(ctx context.Context, acct string, webfinger bool) (*accountRef, error) {
	user, host, remote := strings.Cut(acct, "@")
	if !remote || strings.EqualFold(host, h.Instance.Domain) {
		return h.refByIRI(ctx, h.Instance.ActorID(strings.ToLower(user)), false)
	}
	known, err := h.DB.RemoteActorsNamed(ctx, user)
	if err != nil {
		return nil, err
	}
	for _, iri := range known {
		if ref, err := h.refByIRI(ctx, iri, false); err == nil && strings.EqualFold(accountHost(ref), host) {
			return ref, nil
		}
	}
	if !webfinger || h.Publisher == nil || h.Publisher.Lookup == nil {
		return nil, ErrNotFound
	}
	iri, err := h.Publisher.Lookup(ctx, acct)
	if err != nil {
		h.Logger.Debug("client API: WebFinger lookup failed", "acct", acct, "err", err)
		return nil, ErrNotFound
	}
	return h.refByIRI(ctx, iri, true)
}

// accountHost is the host an account's acct shows: the authority, with
// its port when it has one, as remoteAccount writes acct.
func accountHost(ref *accountRef) string {
	if ref.Remote == nil {
		return ""
	}
	return host.AuthorityOf(ref.IRI)
}

// searchAccounts serves GET /api/v1/accounts/search?q=&resolve=&limit=&offset=.
func (h *Handler) searchAccounts(c *Call) error {
	q := strings.TrimPrefix(strings.TrimSpace(c.Params.Get("q")), "@")
	limit, err := c.Params.Int("limit", DefaultAccountsLimit)
	if err != nil {
		return err
	}
	offset, err := c.Params.Int("offset", 0)
	if err != nil {
		return err
	}
	limit = min(max(limit, 1), 2*DefaultAccountsLimit)
	if q == "" {
		return c.Empty()
	}
	resolve, _ := c.Params.Bool("resolve")
	if strings.Contains(q, "@") {
		ref, err := h.resolveAcct(c.Ctx(), q, resolve)
		if errors.Is(err, ErrNotFound) || offset > 0 {
			return c.Empty()
		}
		if err != nil {
			return err
		}
		acc, err := h.account(c.Ctx(), ref)
		if err != nil {
			return err
		}
		return c.JSON([]Account{acc})
	}
	iris, err := h.DB.SearchAccounts(c.Ctx(), h.Instance.Base(), q, limit, max(offset, 0))
	if err != nil {
		return err
	}
	list, err := h.accounts(c.Ctx(), iris)
	if err != nil {
		return err
	}
	return c.JSON(list)
}

// Relationship is Mastodon's Relationship entity.
type Relationship struct {
	ID                  string   `json:"id"`
	Following           bool     `json:"following"`
	ShowingReblogs      bool     `json:"showing_reblogs"`
	Notifying           bool     `json:"notifying"`
	Languages           []string `json:"languages"`
	FollowedBy          bool     `json:"followed_by"`
	Blocking            bool     `json:"blocking"`
	BlockedBy           bool     `json:"blocked_by"`
	Muting              bool     `json:"muting"`
	MutingNotifications bool     `json:"muting_notifications"`
	MutingExpiresAt     *string  `json:"muting_expires_at"`
	Requested           bool     `json:"requested"`
	RequestedBy         bool     `json:"requested_by"`
	DomainBlocking      bool     `json:"domain_blocking"`
	Endorsed            bool     `json:"endorsed"`
	Note                string   `json:"note"`
}

func relationship(id string, r *store.Relation) Relationship {
	var expires *string
	if !r.MuteExpiresAt.IsZero() {
		at := Time(r.MuteExpiresAt)
		expires = &at
	}
	return Relationship{MutingExpiresAt: expires, ID: id, Following: r.Following, ShowingReblogs: r.Following || r.Requested, Languages: nil,
		FollowedBy: r.FollowedBy, Blocking: r.Blocking, Muting: r.Muting, MutingNotifications: r.Muting && r.MutingNotifications,
		Requested: r.Requested, RequestedBy: r.RequestedBy, DomainBlocking: r.DomainBlocking}
}

// relationshipOf is the caller's Relationship with one account.
func (h *Handler) relationshipOf(c *Call, ref *accountRef) (Relationship, error) {
	id, err := h.accountID(c.Ctx(), ref)
	if err != nil {
		return Relationship{}, err
	}
	rels, err := h.DB.Relations(c.Ctx(), c.Actor.ID, []string{ref.IRI})
	if err != nil {
		return Relationship{}, err
	}
	rel := relationship(id, rels[ref.IRI])
	notified, err := h.DB.NotifiedAmong(c.Ctx(), c.Actor.ID, []string{ref.IRI})
	rel.Notifying = notified[ref.IRI] && (rel.Following || rel.Requested)
	return rel, err
}

// relationships serves GET /api/v1/accounts/relationships?id[]=: one
// entry an account, in the order asked, unknown ids left out, an id
// named twice answered once (Mastodon reads them with one WHERE id IN).
func (h *Handler) relationships(c *Call) error {
	type known struct{ id, iri string }
	var list []known
	seen := map[int64]bool{}
	for _, id := range c.Params.List("id") {
		n, ok := ParseID(id)
		if !ok || seen[n] {
			continue
		}
		seen[n] = true
		iri, err := h.DB.AccountIRI(c.Ctx(), n)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		list = append(list, known{id, iri})
	}
	iris := make([]string, len(list))
	for i, k := range list {
		iris[i] = k.iri
	}
	rels, err := h.DB.Relations(c.Ctx(), c.Actor.ID, iris)
	if err != nil {
		return err
	}
	notified, err := h.DB.NotifiedAmong(c.Ctx(), c.Actor.ID, iris)
	if err != nil {
		return err
	}
	out := []Relationship{}
	for _, k := range list {
		rel := relationship(k.id, rels[k.iri])
		rel.Notifying = notified[k.iri] && (rel.Following || rel.Requested)
		out = append(out, rel)
	}
	return c.JSON(out)
}

// action serves one of the relationship actions (follow, block, mute
// and their undoing): it resolves :id (the caller's own account is
// refused, as Mastodon refuses following yourself), runs do, and answers
// the relationship as it is then.
func (h *Handler) action(do func(c *Call, ref *accountRef) error) func(*Call) error {
	return func(c *Call) error {
		ref, err := h.refByID(c.Ctx(), c.param("id"))
		if err != nil {
			return err
		}
		if ref.Local != nil && ref.Local.ID == c.Actor.ID {
			return ErrNotPermitted
		}
		if err := do(c, ref); err != nil {
			return err
		}
		rel, err := h.relationshipOf(c, ref)
		if err != nil {
			return err
		}
		return c.JSON(rel)
	}
}

// publish sends an activity of the caller's through the outbox.
func (h *Handler) publish(c *Call, doc *as.Object) error {
	_, err := h.Publisher.Publish(c.Ctx(), c.Actor, doc, outbox.Options{})
	return err
}

// follow is POST /api/v1/accounts/:id/follow: a Follow through the
// outbox, pending until the account accepts. Following an account
// already followed (or asked) changes nothing, as in Mastodon.
func (h *Handler) follow(c *Call, ref *accountRef) error {
	if notify, set := c.Params.Bool("notify"); set {
		// Whether the caller hears of the account's new posts (a
		// "status" notification): private, nothing is sent.
		if err := h.DB.SetFollowNotify(c.Ctx(), c.Actor.ID, ref.IRI, notify); err != nil {
			return err
		}
	}
	rel, err := h.relationshipOf(c, ref)
	switch {
	case err != nil || rel.Following || rel.Requested:
		return err
	case rel.Blocking:
		return ErrNotPermitted
	}
	return h.publish(c, as.NewActivity("Follow", as.IRI(ref.IRI)))
}

// unfollow is POST /api/v1/accounts/:id/unfollow: the Undo of the
// actor's Follow; nothing when it follows not.
func (h *Handler) unfollow(c *Call, ref *accountRef) error {
	follows, err := h.DB.FollowingOf(c.Ctx(), c.Actor.ID)
	if err != nil {
		return err
	}
	if err := h.DB.SetFollowNotify(c.Ctx(), c.Actor.ID, ref.IRI, false); err != nil {
		return err
	}
	for _, f := range follows {
		if f.Target == ref.IRI {
			return h.publish(c, as.NewActivity("Undo", as.IRI(f.FollowID)))
		}
	}
	return nil
}

// block is POST /api/v1/accounts/:id/block: a Block through the outbox
// (the follows between the two go); nothing when it is blocked already.
func (h *Handler) block(c *Call, ref *accountRef) error {
	_, err := h.DB.LatestBlock(c.Ctx(), c.Actor.ID, ref.IRI)
	if errors.Is(err, store.ErrNotFound) {
		return h.publish(c, as.NewActivity("Block", as.IRI(ref.IRI)))
	}
	return err
}

// unblock is POST /api/v1/accounts/:id/unblock: the Undo of the Block.
func (h *Handler) unblock(c *Call, ref *accountRef) error {
	iri, err := h.DB.LatestBlock(c.Ctx(), c.Actor.ID, ref.IRI)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return h.publish(c, as.NewActivity("Undo", as.IRI(iri)))
}

// mute is POST /api/v1/accounts/:id/mute (notifications, default true;
// duration in seconds, 0 for ever). Nothing is sent.
func (h *Handler) mute(c *Call, ref *accountRef) error {
	m := &store.Mute{Target: ref.IRI, Notifications: true}
	if v, set := c.Params.Bool("notifications"); set {
		m.Notifications = v
	}
	secs, err := c.Params.Int("duration", 0)
	if err != nil {
		return err
	}
	if secs > 0 {
		m.ExpiresAt = h.Now().Add(time.Duration(secs) * time.Second)
	}
	return h.DB.SetMute(c.Ctx(), c.Actor.ID, m)
}

// unmute is POST /api/v1/accounts/:id/unmute.
func (h *Handler) unmute(c *Call, ref *accountRef) error {
	return h.DB.RemoveMute(c.Ctx(), c.Actor.ID, ref.IRI)
}

// answerRequest serves POST /api/v1/follow_requests/:id/authorize and
// /reject: the existing follow-request path (Publisher.AnswerRequest:
// the follower's state, the Accept or Reject, the webhook event).
func (h *Handler) answerRequest(approve bool) func(*Call) error {
	return func(c *Call) error {
		ref, err := h.refByID(c.Ctx(), c.param("id"))
		if err != nil {
			return err
		}
		_, err = h.Publisher.AnswerRequest(c.Ctx(), c.Actor, ref.IRI, approve, nil)
		if err != nil && !errors.Is(err, errNoRequest) {
			return err
		}
		if errors.Is(err, errNoRequest) {
			return ErrNotFound
		}
		// Answered: the request's notification has done its work.
		if err := h.DB.RemoveNotificationsFrom(c.Ctx(), c.Actor.ID, "follow_request", ref.IRI); err != nil {
			return err
		}
		rel, err := h.relationshipOf(c, ref)
		if err != nil {
			return err
		}
		return c.JSON(rel)
	}
}

// familiarFollowers serves GET /api/v1/accounts/familiar_followers:
// Herald does not work out who of one's follows follows an account, so
// each account asked for gets an empty list.
func (h *Handler) familiarFollowers(c *Call) error {
	out := []map[string]any{}
	for _, id := range c.Params.List("id") {
		out = append(out, map[string]any{"id": id, "accounts": []any{}})
	}
	return c.JSON(out)
}

// param is a path parameter.
func (c *Call) param(name string) string { return chi.URLParam(c.R, name) }

// errNoRequest is the outbox's answer to a follow request there is not.
var errNoRequest = outbox.ErrNoRequest
