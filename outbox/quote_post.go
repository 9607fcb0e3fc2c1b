package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"herald/federation"
	"herald/federation/as"
	"herald/outbox/delivery"
	"herald/store"
	"herald/timeline"
)

// Herald's actors quote (FEP-044f), as Mastodon 4.5 does
// (app/serializers/activitypub/note_serializer.rb, quote and the legacy
// _misskey_quote and quoteUri; app/services/activitypub/quote_request*):
// the quoting post names the quoted one in the three properties and is
// addressed to its author (author(), in authoring.go); a QuoteRequest
// goes to the quoted author's inbox, whose Accept (with a stamp) makes
// Herald send the post again as an Update carrying quoteAuthorization
// (QuoteAccepted). A quote of one's own post needs no request; a quote of
// another local post gets its stamp at once when that post may be
// quoted.

// quoteTerms define the quote properties (Mastodon's quotes context
// extension).
var quoteTerms = map[string]any{
	"quote":              map[string]any{"@id": "https://w3id.org/fep/044f#quote", "@type": "@id"},
	"quoteUri":           "http://fedibird.com/ns#quoteUri",
	"_misskey_quote":     "https://misskey-hub.net/ns#_misskey_quote",
	"quoteAuthorization": map[string]any{"@id": "https://w3id.org/fep/044f#quoteAuthorization", "@type": "@id"},
}

// ErrQuoteRefused is a quote the quoted post's interactionPolicy does not
// allow; nothing was stored or sent.
var ErrQuoteRefused = errors.New("the quoted post's author does not allow it to be quoted")

// quotePlan is what a new quote post needs once it is stored.
type quotePlan struct {
	target, author, inbox string
	local                 *store.Object // the quoted post when it is Herald's
}

// planQuote checks a new post's quote (obj.Quoted) and writes its three
// spellings; nil when obj quotes nothing. A post that may not be quoted
// (its canQuote names neither the public, nor the quoter, nor a
// collection the quoter is in; a local post that is not public) is an
// *InputError saying ErrQuoteRefused; so is a quote of another's post that
// is neither public nor unlisted.
func (p *Publisher) planQuote(ctx context.Context, actor *store.Actor, obj *as.Object) (*quotePlan, error) {
	target := obj.Quoted()
	if target == "" {
		return nil, nil
	}
	self := p.Instance.ActorID(actor.Name)
	author, _, doc, err := p.objectOf(ctx, "quote", target)
	if err != nil {
		return nil, err
	}
	if doc != nil && doc.Type.Has("Announce") {
		return nil, inputErr("quote: %s is a boost; quote the post it boosts", target)
	}
	qp := &quotePlan{target: target, author: author}
	if p.ours(target) {
		if qp.local, err = p.DB.ObjectByIRI(ctx, target); err != nil {
			return nil, err
		}
		if author != self && (!qp.local.Public || qp.local.Deleted || (doc != nil && !mayQuote(doc, self, p.followsCollections(ctx, actor)))) {
			return nil, &InputError{Msg: "quote: " + ErrQuoteRefused.Error()}
		}
	} else if author != self {
		// Only a public or unlisted post may be quoted by another, as
		// Mastodon's Quote validates (quoted_status.distributable?).
		if doc != nil && (!(doc.To.HasPublic() || doc.CC.HasPublic()) || !mayQuote(doc, self, p.followsCollections(ctx, actor))) {
			return nil, &InputError{Msg: "quote: " + ErrQuoteRefused.Error()}
		}
		a, err := p.Fetcher.Actor(ctx, author)
		if err != nil {
			return nil, inputErr("quote: the author of %s: %v", target, err)
		}
		qp.inbox = a.Inbox
	}
	obj.Quote, obj.QuoteURL, obj.QuoteURI, obj.MisskeyQuote = as.IRI(target), as.Ref{}, as.IRI(target), as.IRI(target)
	return qp, nil
}

// followsCollections are the followers collections of the accounts actor
// follows, which a canQuote may name.
func (p *Publisher) followsCollections(ctx context.Context, actor *store.Actor) func(string) bool {
	return func(collection string) bool {
		owner, ok := followersOwner(collection)
		if !ok {
			return false
		}
		ids, err := p.DB.LocalFollowersOf(ctx, owner)
		return err == nil && slices.Contains(ids, actor.ID)
	}
}

// followersOwner is the actor whose followers collection iri is, by
// Mastodon's and GoToSocial's spelling (ACTOR/followers).
func followersOwner(iri string) (string, bool) {
	const suffix = "/followers"
	if len(iri) <= len(suffix) || iri[len(iri)-len(suffix):] != suffix {
		return "", false
	}
	return iri[:len(iri)-len(suffix)], true
}

// keepQuoted keeps the remote post a new post quotes as a status
// (fetched through the guarded fetcher, from its own server), so that the
// quote shows it; objectOf then reads it there, or, when it could not be
// had, fetches it and says why.
func (p *Publisher) keepQuoted(ctx context.Context, target string) {
	if !p.ours(target) {
		timeline.FetchStatus(ctx, p.DB, p.Instance, p.Fetcher, target, p.Now())
	}
}

// quotedAuthor is the author of the post obj quotes, as Herald has it,
// or "". The quoted author is addressed and tagged but, as Mastodon's
// silent mention of the quoted account (Quote#ensure_quoted_access), not
// named in the text.
func (p *Publisher) quotedAuthor(ctx context.Context, obj *as.Object) string {
	target := obj.Quoted()
	if target == "" {
		return ""
	}
	if p.ours(target) {
		o, err := p.DB.ObjectByIRI(ctx, target)
		if err != nil {
			return ""
		}
		a, err := p.DB.ActorByID(ctx, o.ActorID)
		if err != nil {
			return ""
		}
		return p.Instance.ActorID(a.Name)
	}
	if s, err := p.DB.StatusByIRI(ctx, target); err == nil {
		return s.Author
	}
	return ""
}

// mayQuote reads a post's interactionPolicy.canQuote as Mastodon does
// (app/lib/activitypub/parser/status_parser.rb, quote_policy): absent,
// anyone may ask; present, the quoter must be named in
// automaticApproval or manualApproval, by itself, the public, or a
// followers collection it is in (inCollection).
func mayQuote(doc *as.Object, self string, inCollection func(string) bool) bool {
	var policy struct {
		CanQuote *struct {
			Automatic json.RawMessage `json:"automaticApproval"`
			Manual    json.RawMessage `json:"manualApproval"`
		} `json:"canQuote"`
	}
	if has, err := doc.Decode("interactionPolicy", &policy); !has || err != nil || policy.CanQuote == nil {
		return true
	}
	for _, raw := range []json.RawMessage{policy.CanQuote.Automatic, policy.CanQuote.Manual} {
		for _, who := range iriList(raw) {
			if federation.IsPublic(who) || who == self || inCollection(who) {
				return true
			}
		}
	}
	return false
}

// iriList reads one IRI or a list of them.
func iriList(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	json.Unmarshal(raw, &many)
	return many
}

// applyQuote runs in a quote post's transaction, before the post is
// stored: a quote of a local post gets its stamp now.
func (p *Publisher) applyQuote(ctx context.Context, tx *store.Tx, pl *plan, obj *as.Object, qp *quotePlan) error {
	if qp == nil || qp.local == nil || qp.author == p.Instance.ActorID(pl.actor.Name) {
		return nil
	}
	owner, err := tx.ActorByID(ctx, qp.local.ActorID)
	if err != nil {
		return err
	}
	stamp, err := tx.AuthorizeQuote(ctx, qp.local.ID, obj.ID, p.Instance.ActorID(pl.actor.Name), "")
	if err != nil {
		return err
	}
	return obj.Set("quoteAuthorization", p.Instance.QuoteAuthorizationURL(owner.Name, stamp.ID))
}

// requestQuote runs in a quote post's transaction once the post is
// stored: the QuoteRequest to the quoted post's remote author, its id
// kept with the quote for the answer to name.
func (p *Publisher) requestQuote(ctx context.Context, tx *store.Tx, pl *plan, qp *quotePlan, now time.Time) error {
	if qp == nil || qp.inbox == "" {
		return nil
	}
	s, err := tx.StatusByIRI(ctx, pl.objIRI)
	if err != nil {
		return err
	}
	req := &as.Object{ID: p.Instance.NewID(pl.actor.Name, "quote_requests", now), Type: as.Types{"QuoteRequest"},
		JSONLDContext: contextJSON(quoteContext), Object: as.IRI(qp.target), To: as.IRIs(qp.author)}
	if err := req.Set("instrument", pl.objIRI); err != nil {
		return err
	}
	if err := tx.PutStatusQuote(ctx, &store.StatusQuote{StatusID: s.ID, QuotedIRI: qp.target, State: store.QuotePending,
		Request: req.ID, UpdatedAt: now}); err != nil {
		return err
	}
	_, _, err = p.Queue(ctx, tx, Outbound{Actor: pl.actor, Activity: req, Audience: delivery.Audience{Inboxes: []string{qp.inbox}},
		ObjectIRI: qp.target}, now)
	return err
}

// QuoteAccepted applies, inside the inbox's transaction, the quoted
// author's Accept of local's QuoteRequest for its post iri: the stamp
// (approval) is written into the post, which goes again as an Update to
// every server that got it, as Mastodon sends it once the quote is
// approved.
func (p *Publisher) QuoteAccepted(ctx context.Context, tx *store.Tx, local *store.Actor, iri, approval string, now time.Time) error {
	return p.resendQuote(ctx, tx, local, iri, approval, now)
}

// QuotesRevoked applies, inside tx, the revocation of the quotes revoked
// (timeline.StampDeleted, as they were before): each local post among
// them whose quote was accepted goes again as an Update without
// quoteAuthorization, so the servers that got it stop showing the quote
// approved, as Mastodon redistributes it
// (app/lib/activitypub/activity/delete.rb, revoke_quote;
// app/services/revoke_quote_service.rb).
func (p *Publisher) QuotesRevoked(ctx context.Context, tx *store.Tx, revoked []*store.StatusQuote, now time.Time) error {
	for _, sq := range revoked {
		if sq.State != store.QuoteAccepted {
			continue // it went out without a stamp
		}
		s, err := tx.StatusByID(ctx, sq.StatusID)
		if err != nil {
			return err
		}
		if s.LocalActorID == 0 {
			continue
		}
		local, err := tx.ActorByID(ctx, s.LocalActorID)
		if err != nil {
			return err
		}
		if err := p.resendQuote(ctx, tx, local, s.IRI, "", now); err != nil {
			return err
		}
	}
	return nil
}

// resendQuote writes approval into local's post iri as its
// quoteAuthorization ("" takes it out) and sends the post again, as an
// Update, to every server that got it.
func (p *Publisher) resendQuote(ctx context.Context, tx *store.Tx, local *store.Actor, iri, approval string, now time.Time) error {
	o, err := tx.ObjectByIRI(ctx, iri)
	if err != nil || o.Deleted {
		return err
	}
	obj, err := as.Parse([]byte(o.Body))
	if err != nil {
		return err
	}
	client := clientContext(withoutOwnTerms(obj.JSONLDContext))
	obj.JSONLDContext = nil
	if approval == "" {
		obj.Delete("quoteAuthorization")
	} else if err := obj.Set("quoteAuthorization", approval); err != nil {
		return err
	}
	body, err := objectBody(obj, client)
	if err != nil {
		return err
	}
	if err := tx.UpdateObject(ctx, iri, body, o.Public, now); err != nil {
		return err
	}
	inboxes, err := tx.InboxesThatGot(ctx, iri)
	if err != nil {
		return err
	}
	act := &as.Object{Type: as.Types{"Update"}, JSONLDContext: contextFor(obj, client), Object: as.Embed(obj), To: obj.To, CC: obj.CC}
	aud := delivery.Audience{Inboxes: inboxes}
	if o.Public || slices.Contains(obj.To.IDs(), p.Instance.FollowersURL(local.Name)) {
		aud.FollowersOf = local.ID
	}
	if _, _, err := p.Queue(ctx, tx, Outbound{Actor: local, Activity: act, Audience: aud, ObjectIRI: iri, Public: o.Public, InOutbox: true}, now); err != nil {
		return err
	}
	return timeline.Published(ctx, tx, p.Instance, timeline.Outbound{Actor: local, Activity: act, Now: now})
}
