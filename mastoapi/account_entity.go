package mastoapi

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"herald/federation"
	"herald/outbox"
	"herald/outbox/compose"
	"herald/store"
)

// Profile limits, Mastodon's (app/models/account.rb): four fields of at
// most 255 characters a name or value, a display name of 30, a note of
// 500.
const (
	maxFields      = 4
	maxFieldChars  = 255
	maxDisplayName = 30
	maxNote        = 500
)

// Where Mastodon serves the images of accounts that have none; Herald
// serves a plain one there too (missing.go), since apps need a URL.
const (
	missingAvatar = "/avatars/original/missing.png"
	missingHeader = "/headers/original/missing.png"
)

// Account is Mastodon's Account entity.
type Account struct {
	ID             string    `json:"id"`
	Username       string    `json:"username"`
	Acct           string    `json:"acct"`
	URL            string    `json:"url"`
	URI            string    `json:"uri"`
	DisplayName    string    `json:"display_name"`
	Note           string    `json:"note"`
	Avatar         string    `json:"avatar"`
	AvatarStatic   string    `json:"avatar_static"`
	Header         string    `json:"header"`
	HeaderStatic   string    `json:"header_static"`
	Locked         bool      `json:"locked"`
	Fields         []Field   `json:"fields"`
	Emojis         []any     `json:"emojis"`
	Bot            bool      `json:"bot"`
	Group          bool      `json:"group"`
	Discoverable   *bool     `json:"discoverable"`
	Indexable      bool      `json:"indexable"`
	HideCollection *bool     `json:"hide_collections"`
	Noindex        bool      `json:"noindex"`
	Memorial       bool      `json:"memorial,omitempty"`
	CreatedAt      Timestamp `json:"created_at"`
	LastStatusAt   *string   `json:"last_status_at"`
	StatusesCount  int       `json:"statuses_count"`
	FollowersCount int       `json:"followers_count"`
	FollowingCount int       `json:"following_count"`
	// Roles are the highlighted roles, sent for local accounts only, as
	// Mastodon's REST::AccountSerializer does (has_many :roles, if:
	// :local?): Herald's accounts have none, so [] for each of its own
	// and nothing for a remote one.
	Roles *[]AccountRole `json:"roles,omitempty"`
}

// AccountRole is Mastodon's AccountRole entity: a role shown on a profile.
type AccountRole struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Color string `json:"color"`
}

// MutedAccount is an account in the list of mutes (GET /api/v1/mutes):
// Mastodon's MutedAccount, an Account with when the mute ends (null for a
// mute without an end).
type MutedAccount struct {
	Account
	MuteExpiresAt *string `json:"mute_expires_at"`
}

// Field is a profile field; Value is HTML.
type Field struct {
	Name       string  `json:"name"`
	Value      string  `json:"value"`
	VerifiedAt *string `json:"verified_at"`
}

// CredentialAccount is the token's own account, with what it set
// (verify_credentials, update_credentials).
type CredentialAccount struct {
	Account
	Source Source `json:"source"`
	Role   Role   `json:"role"`
}

// Source is what an account's owner wrote, before rendering.
type Source struct {
	Note                string   `json:"note"`
	Fields              []Field  `json:"fields"`
	Privacy             string   `json:"privacy"`
	Sensitive           bool     `json:"sensitive"`
	Language            string   `json:"language"`
	FollowRequestsCount int      `json:"follow_requests_count"`
	Discoverable        bool     `json:"discoverable"`
	Indexable           bool     `json:"indexable"`
	HideCollections     bool     `json:"hide_collections"`
	AttributionDomains  []string `json:"attribution_domains"`
}

// Role is Mastodon's Role entity; every Herald account has the base
// role Mastodon gives everyone (UserRole::EVERYONE_ROLE_ID, -99): apps
// only read it to show moderation tools.
type Role struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Color       string `json:"color"`
	Permissions string `json:"permissions"`
	Highlighted bool   `json:"highlighted"`
}

// accountRef is an account the API resolved: a local actor or a remote
// one's cached document.
type accountRef struct {
	IRI    string
	Local  *store.Actor
	Remote *federation.RemoteActor
}

// refByIRI resolves an actor id: a local actor, or a remote one from the
// cache, fetched (through the guarded fetcher) when fetch is set and it
// is not cached.
func (h *Handler) refByIRI(ctx context.Context, iri string, fetch bool) (*accountRef, error) {
	if name, ok := h.Instance.LocalName(iri); ok {
		a, err := h.DB.ActorByName(ctx, name)
		if err != nil {
			return nil, err
		}
		return &accountRef{IRI: iri, Local: a}, nil
	}
	ra, err := h.Fetcher.CachedActor(ctx, iri)
	if errors.Is(err, store.ErrNotFound) && fetch {
		ra, err = h.Fetcher.Actor(ctx, iri)
	}
	switch {
	case errors.Is(err, federation.ErrCache):
		// The database failed: a 500 (or 503), not a "not found" the
		// app would take for the account's absence.
		return nil, err
	case err != nil:
		// Unknown, unreachable, gone or refused by the federation
		// policy: all alike not found, so the answer says nothing
		// of blocks.
		h.Logger.Debug("client API: no account", "iri", iri, "err", err)
		return nil, ErrNotFound
	}
	return &accountRef{IRI: ra.ID, Remote: ra}, nil
}

// refByID resolves an account id the API showed.
func (h *Handler) refByID(ctx context.Context, id string) (*accountRef, error) {
	n, ok := ParseID(id)
	if !ok {
		return nil, ErrNotFound
	}
	iri, err := h.DB.AccountIRI(ctx, n)
	if err != nil {
		return nil, err
	}
	return h.refByIRI(ctx, iri, true)
}

// accountID is the API's id of the account, given on first showing.
func (h *Handler) accountID(ctx context.Context, ref *accountRef) (string, error) {
	first := h.Now()
	if ref.Local != nil {
		first = ref.Local.CreatedAt
	}
	id, err := h.DB.AccountID(ctx, ref.IRI, first)
	return ID(id), err
}

// account is the Account entity of ref.
func (h *Handler) account(ctx context.Context, ref *accountRef) (Account, error) {
	id, err := h.accountID(ctx, ref)
	if err != nil {
		return Account{}, err
	}
	if ref.Local != nil {
		return h.localAccount(ctx, id, ref.Local)
	}
	acc := h.remoteAccount(id, ref.Remote)
	// The counts its collections gave when an app first opened it
	// (timeline.ReadOutbox).
	if known, err := h.DB.RemoteAccountByIRI(ctx, ref.IRI); err == nil {
		acc.StatusesCount, acc.FollowersCount, acc.FollowingCount = known.StatusesCount, known.FollowersCount, known.FollowingCount
	} else if !errors.Is(err, store.ErrNotFound) {
		return Account{}, err
	}
	return acc, nil
}

// accounts is the Account entities of a list of actor ids, in order;
// ones Herald cannot show (not cached, gone) are left out, as Mastodon
// leaves out accounts it does not have.
func (h *Handler) accounts(ctx context.Context, iris []string) ([]Account, error) {
	out := []Account{}
	for _, iri := range iris {
		ref, err := h.refByIRI(ctx, iri, false)
		if errors.Is(err, ErrNotFound) || errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		a, err := h.account(ctx, ref)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func (h *Handler) localAccount(ctx context.Context, id string, a *store.Actor) (Account, error) {
	followers, following, err := h.DB.ActorCounts(ctx, a.ID)
	if err != nil {
		return Account{}, err
	}
	posts, err := h.DB.CountActorPosts(ctx, a.ID)
	if err != nil {
		return Account{}, err
	}
	fields := []Field{}
	for _, f := range a.Fields {
		fields = append(fields, Field{Name: f.Name, Value: outbox.FieldHTML(f.Value)})
	}
	disc := a.Discoverable
	hide := h.HideSocialGraph
	return Account{
		ID: id, Username: a.Name, Acct: a.Name, URL: h.Instance.ProfileURL(a.Name), URI: h.Instance.ActorID(a.Name),
		DisplayName: a.DisplayName, Note: federation.SummaryHTML(a.Summary),
		Avatar: h.avatarURL(a.AvatarURL), AvatarStatic: h.avatarURL(a.AvatarURL),
		Header: h.headerURL(a.HeaderURL), HeaderStatic: h.headerURL(a.HeaderURL),
		Locked: a.ManualApproval, Fields: fields, Emojis: []any{},
		Bot: a.Type == "Service" || a.Type == "Application", Group: a.Type == "Group",
		Discoverable: &disc, Indexable: false, HideCollection: &hide, Memorial: a.Memorial,
		CreatedAt: Timestamp(Day(a.CreatedAt)), StatusesCount: posts, FollowersCount: followers, FollowingCount: following,
		Roles: &[]AccountRole{},
	}, nil
}

// remoteAccount is a remote actor's Account entity, from its cached
// document. Its HTML (note, field values) is sanitised as inbound posts
// are; counts are what Herald knows, 0 (Mastodon counts only what it
// stores too).
func (h *Handler) remoteAccount(id string, ra *federation.RemoteActor) Account {
	doc := ra.Document
	u, _ := url.Parse(ra.ID)
	host := ""
	if u != nil {
		host = u.Host // the account's domain as acct shows it (the later host parser's job)
	}
	username := ra.PreferredUsername
	if username == "" {
		username = lastSegment(ra.ID)
	}
	fields := []Field{}
	for _, t := range asList(doc["attachment"]) {
		m, ok := t.(map[string]any)
		if !ok || federation.FirstString(m["type"]) != "PropertyValue" || len(fields) == maxFields {
			continue
		}
		fields = append(fields, Field{Name: federation.FirstString(m["name"]), Value: compose.Sanitize(federation.FirstString(m["value"]))})
	}
	profile := federation.IDOf(doc["url"])
	if profile == "" {
		profile = ra.ID
	}
	locked, _ := doc["manuallyApprovesFollowers"].(bool)
	var disc *bool
	if d, ok := doc["discoverable"].(bool); ok {
		disc = &d
	}
	indexable, _ := doc["indexable"].(bool)
	memorial, _ := doc["memorial"].(bool)
	created := ra.FetchedAt
	if t, err := time.Parse(time.RFC3339, federation.FirstString(doc["published"])); err == nil {
		created = t
	}
	avatar, header := imageURL(doc["icon"]), imageURL(doc["image"])
	return Account{
		ID: id, Username: username, Acct: username + "@" + host, URL: profile, URI: ra.ID,
		DisplayName: ra.Name, Note: compose.Sanitize(federation.FirstString(doc["summary"])),
		Avatar: h.avatarURL(avatar), AvatarStatic: h.avatarURL(avatar), Header: h.headerURL(header), HeaderStatic: h.headerURL(header),
		Locked: locked, Fields: fields, Emojis: []any{}, Bot: ra.Type == "Service" || ra.Type == "Application", Group: ra.Type == "Group",
		Discoverable: disc, Indexable: indexable, Memorial: memorial,
		CreatedAt: Timestamp(Day(created)),
	}
}

// avatarURL is an avatar's URL, or the missing-avatar image's.
func (h *Handler) avatarURL(u string) string {
	if u == "" {
		return h.Instance.Base() + missingAvatar
	}
	return u
}

func (h *Handler) headerURL(u string) string {
	if u == "" {
		return h.Instance.Base() + missingHeader
	}
	return u
}

// imageURL is the http(s) URL of an actor's icon or image ("" if none).
func imageURL(v any) string {
	if l := asList(v); len(l) > 0 {
		v = l[0]
	}
	u := federation.IDOf(v)
	if m, ok := v.(map[string]any); ok {
		u = federation.IDOf(m["url"])
	}
	if !webURL(u) {
		return ""
	}
	return u
}

func asList(v any) []any {
	switch t := v.(type) {
	case []any:
		return t
	case nil:
		return nil
	}
	return []any{v}
}

func lastSegment(iri string) string {
	iri = strings.TrimRight(iri, "/")
	return iri[strings.LastIndexByte(iri, '/')+1:]
}

func displayName(a *store.Actor) string {
	if a.DisplayName != "" {
		return a.DisplayName
	}
	return a.Name
}

// credentialAccount is the token's own account with its source.
func (h *Handler) credentialAccount(ctx context.Context, a *store.Actor) (CredentialAccount, error) {
	acc, err := h.account(ctx, &accountRef{IRI: h.Instance.ActorID(a.Name), Local: a})
	if err != nil {
		return CredentialAccount{}, err
	}
	pending, err := h.DB.Followers(ctx, a.ID, store.StatePending)
	if err != nil {
		return CredentialAccount{}, err
	}
	fields := []Field{}
	for _, f := range a.Fields {
		fields = append(fields, Field{Name: f.Name, Value: f.Value})
	}
	return CredentialAccount{
		Account: acc,
		Source: Source{Note: a.Summary, Fields: fields, Privacy: "public", Language: "", FollowRequestsCount: len(pending),
			Discoverable: a.Discoverable, HideCollections: h.HideSocialGraph, AttributionDomains: []string{}},
		Role: Role{ID: "-99", Permissions: "0"},
	}, nil
}
