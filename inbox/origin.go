package inbox

import (
	"context"
	"errors"

	"herald/federation"
	"herald/federation/as"
	"herald/host"
)

// The origin rules, as Mastodon applies them (app/lib/activitypub/activity.rb,
// activity/create.rb's non_matching_uri_hosts?, jsonld_helper.rb's
// invalid_origin?, fetch_remote_status_service.rb's trustworthy_attribution?):
// a server speaks only for ids on its own host. An activity whose id or actor
// is on another host than its signer is taken from its origin instead, and
// an embedded object that is not the actor's own is taken from its origin or
// refused. Every id the replay defence records is therefore on a host that
// vouched for it, so no server can mark another's ids as seen. Nothing
// dropped here is recorded as seen: a genuine copy arriving later is applied.

// checkOrigin applies the origin rules to a verified activity signed by
// signer (the key's owner). It may replace the activity, or its embedded
// object, with what their origin serves. It returns a drop reason, or ""
// when the activity may be applied; errFetchRefused when a fetch it needs
// is not allowed now.
func (h *Handler) checkOrigin(ctx context.Context, a *activity, signer string) (string, error) {
	// Ids on this server are Herald's own: no remote sender speaks for them.
	if h.isLocal(a.actor) || h.isLocal(a.id) {
		return DropForeignOrigin, nil
	}
	origin := host.AuthorityOf(signer)
	switch {
	case host.AuthorityOf(a.actor) != origin || a.id != "" && host.AuthorityOf(a.id) != origin:
		// Forwarded, or claiming someone else's ids: only the origin can
		// say what this activity is.
		if reason, err := h.fromOrigin(ctx, a); reason != "" || err != nil {
			return reason, err
		}
	case a.actor != signer:
		// Another actor on the signer's own server.
		return DropActorMismatch, nil
	}
	return h.checkObject(ctx, a)
}

// fromOrigin replaces the activity with the document its id names, fetched
// from its own host (a GET signed as the instance actor, over the guarded
// client): it is used only if it is served with exactly that id and its
// actor is on that host. Its actor is fetched too, as a signer's would
// have been, since a Follow needs its inbox.
func (h *Handler) fromOrigin(ctx context.Context, a *activity) (string, error) {
	if a.id == "" {
		return DropForeignOrigin, nil // nothing to fetch it by
	}
	return h.withOrigin(ctx, a.id, func(t *ticket) string {
		doc, body, reason := h.served(ctx, t, a.id)
		if reason != "" {
			return reason
		}
		actor := doc.Actor.ID
		if doc.Type.First() == "" || !host.SameAuthority(actor, a.id) || h.isLocal(actor) {
			return DropForeignOrigin
		}
		if _, err := fetchWith(h, ctx, t, func(ctx context.Context) (*federation.RemoteActor, error) { return h.Keys.Actor(ctx, actor) }); err != nil {
			return DropForeignOrigin
		}
		a.setDoc(doc, body)
		return ""
	})
}

// checkObject applies the rules to an embedded object. Accept and Reject
// embed Herald's own Follow, matched against Herald's records (and only
// among the sender's): the copy is not trusted for anything else. For the
// rest, an object whose id and author (attributedTo, actor) are on the
// actor's host is the actor's own. Otherwise a Create, Update or Delete is
// refused, as Mastodon refuses it: an actor creates only its own objects.
// Any other activity (an Announce, a Like) gets the object from its
// origin, or, for an object of this server, refers to it by id alone.
func (h *Handler) checkObject(ctx context.Context, a *activity) (string, error) {
	if a.object == nil || a.typ == "Accept" || a.typ == "Reject" || attributedWithin(a.object, a.actor) {
		return "", nil
	}
	switch {
	case a.typ == "Create" || a.typ == "Update" || a.typ == "Delete":
		return DropMisattributed, nil
	case a.objectID == "":
		return DropMisattributed, nil // attributed elsewhere, and nothing to fetch it by
	case h.isLocal(a.objectID):
		return "", a.replaceObject(as.IRI(a.objectID))
	}
	return h.objectFromOrigin(ctx, a)
}

// objectFromOrigin replaces the activity's object with the document its id
// names, fetched from its own host: used only if served with that id and
// with its authors on that host.
func (h *Handler) objectFromOrigin(ctx context.Context, a *activity) (string, error) {
	id := a.objectID
	return h.withOrigin(ctx, id, func(t *ticket) string {
		doc, _, reason := h.served(ctx, t, id)
		if reason != "" {
			return reason
		}
		if !attributedWithin(doc, id) {
			return DropMisattributed
		}
		if a.replaceObject(as.Embed(doc)) != nil {
			return DropForeignOrigin
		}
		return ""
	})
}

// attributedWithin reports whether an object's id (if it has one) and every
// author it names are on the same host as iri.
func attributedWithin(obj *as.Object, iri string) bool {
	if obj.ID != "" && !host.SameAuthority(obj.ID, iri) {
		return false
	}
	// "actor" as a list: an object may name several, and each must be on
	// the host.
	for _, field := range []as.Refs{obj.AttributedTo, obj.RefsOf("actor")} {
		for _, author := range field.IDs() {
			if !host.SameAuthority(author, iri) {
				return false
			}
		}
	}
	return true
}

// replaceObject sets the activity's object (a document or a reference) and
// the body stored for apps to match.
func (a *activity) replaceObject(object as.Ref) error {
	a.doc.Object = object
	body, err := as.Marshal(a.doc)
	if err != nil {
		return err
	}
	a.setDoc(a.doc, body)
	return nil
}

// withOrigin runs fn holding a fetch permit for the host of iri (its own
// share of the capacity, like any key host's). It returns errFetchRefused
// when the host's permits are in use or it is cooling off.
func (h *Handler) withOrigin(ctx context.Context, iri string, fn func(*ticket) string) (string, error) {
	t, refused, _ := h.Limits.admit(ctx, host.AuthorityOf(iri), "", true, h.Now())
	if refused != nil {
		return "", errFetchRefused
	}
	defer t.release(h.Now())
	return fn(t), nil
}

// served fetches the document iri names from its host and returns it only
// if it carries exactly that id, with its JSON; otherwise the drop reason.
func (h *Handler) served(ctx context.Context, t *ticket, iri string) (*as.Object, []byte, string) {
	var body []byte
	doc, err := fetchWith(h, ctx, t, func(ctx context.Context) (*as.Object, error) {
		doc, b, _, err := h.Keys.GetObject(ctx, iri)
		body = b
		return doc, err
	})
	switch {
	case errors.Is(err, federation.ErrBlocked):
		return nil, nil, DropBlocked
	case err != nil:
		h.Logger.Info("inbox: not served by its origin", "id", iri, "err", err)
		return nil, nil, DropForeignOrigin
	case doc.ID != iri:
		return nil, nil, DropForeignOrigin
	}
	return doc, body, ""
}
