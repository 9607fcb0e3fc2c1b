package outbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"time"

	"herald/federation"
	"herald/federation/as"
	"herald/outbox/delivery"
	"herald/store"
)

// planCreate publishes a new object: Herald assigns its id, attributedTo and
// published, and addresses it publicly (to as:Public, cc the followers)
// unless the client addressed it.
func (p *Publisher) planCreate(ctx context.Context, pl *plan, doc *as.Object, now time.Time) error {
	obj := doc.Object.Embedded
	if obj == nil {
		return inputErr("a Create needs an embedded object (a Note, Article, ...), not a reference")
	}
	otype := obj.Type.First()
	if otype == "" || asActivityTypes[otype] {
		return inputErr("a Create needs an object, not %q", otype)
	}
	if id := obj.ID; id != "" && !p.ours(id) {
		return inputErr("the object's id %q is not on this server; leave ids out and Herald assigns them", id)
	}
	if by := obj.AttributedTo.First(); by != "" && by != p.Instance.ActorID(pl.actor.Name) {
		return inputErr("the object must be attributed to %s, not %q", p.Instance.ActorID(pl.actor.Name), by)
	}
	obj = obj.Clone()
	// The client's context (an app's own terms) goes with the object
	// wherever it is stored, served and delivered; Herald never fetches it.
	pl.context = clientContext(doc.JSONLDContext, obj.JSONLDContext)
	obj.JSONLDContext = nil
	obj.ID = p.Instance.NewID(pl.actor.Name, "statuses", now)
	obj.AttributedTo = as.IRIs(p.Instance.ActorID(pl.actor.Name))
	if !obj.Has("published") {
		obj.Published = now.Format(time.RFC3339)
	}
	addr, present := readAddressing(doc, obj)
	if addr.empty() {
		if present {
			return inputErr("the addressing (to, cc, bto, bcc, audience) names no recipient and is not public")
		}
		addr = p.publicDefault(pl.actor)
	}
	obj.Context = as.Ref{} // Herald's to assign (thread_context.go)
	extra, err := p.author(ctx, pl, obj)
	if err != nil {
		return err
	}
	addr.addRecipients(extra, p.Instance.FollowersURL(pl.actor.Name))
	qp, err := p.planQuote(ctx, pl.actor, obj)
	if err != nil {
		return err
	}
	if qp != nil && qp.inbox != "" && pl.pending != nil {
		// Its QuoteRequest is kept with the post's status, which a
		// reply waiting for approval does not have (interaction_out.go).
		return inputErr("%s needs its author's approval, and a reply waiting for it cannot quote %s, whose author must approve the quote too: reply without the quote, or quote without replying", obj.InReplyTo.ID, qp.target)
	}
	mediaIDs, err := p.attachments(ctx, pl, obj, 0)
	if err != nil {
		return err
	}
	pl.activity.JSONLDContext = contextFor(obj, pl.context)
	addr.set(pl.activity, obj)
	if err := p.resolveAudience(ctx, pl, addr); err != nil {
		return err
	}
	if err := p.tagRecipients(ctx, pl, obj, addr); err != nil {
		return err
	}
	setThreadContext(obj, obj.InReplyTo.ID != "", obj.Context.ID, pl.public)
	if err := p.postPolicy(pl.actor, obj, nil); err != nil {
		return err
	}
	pl.activity.JSONLDContext = contextFor(obj, pl.context) // with the policy's terms
	pl.objIRI = obj.ID
	pl.activity.Object = as.Embed(obj)
	pl.after = func(ctx context.Context, tx *store.Tx, pl *plan) error { return p.requestQuote(ctx, tx, pl, qp, now) }
	pl.apply = func(ctx context.Context, tx *store.Tx, pl *plan) error {
		if err := p.applyQuote(ctx, tx, pl, obj, qp); err != nil {
			return err
		}
		body, err := objectBody(obj, pl.context)
		if err != nil {
			return err
		}
		o := &store.Object{IRI: pl.objIRI, ActorID: pl.actor.ID, Type: otype, Body: body, Public: pl.public}
		if err := tx.InsertObject(ctx, o, now); err != nil {
			return err
		}
		if err := storeThreadContext(ctx, tx, o, obj); err != nil {
			return err
		}
		if err := tx.AttachMedia(ctx, mediaIDs, o.ID); err != nil {
			return err
		}
		return tx.SetObjectTags(ctx, o.ID, hashtags(obj))
	}
	return nil
}

// planUpdate replaces an object the actor owns with the client's version,
// keeping what Herald assigned (id, type, attributedTo, published), and
// sends the Update to its audience and every server that got the object.
func (p *Publisher) planUpdate(ctx context.Context, pl *plan, doc *as.Object, now time.Time) error {
	patch := doc.Object.Embedded
	if patch == nil {
		return inputErr("an Update needs the whole updated object embedded")
	}
	current, err := p.ownObject(ctx, pl, doc.Object.ID)
	if err != nil {
		return err
	}
	// A reply waiting for a peer's approval went to the peer's author
	// alone; its Update would go to its whole audience and put it in the
	// timelines before the approval (interaction_out.go).
	if held, err := p.DB.UnapprovedInteraction(ctx, current.IRI); err != nil {
		return err
	} else if held {
		return inputErr("%s waits for the approval of the post it replies to (or was rejected): it cannot be edited", current.IRI)
	}
	obj, err := as.Parse([]byte(current.Body))
	if err != nil {
		return err
	}
	// The object keeps the client's context it was created with, and gains
	// what the Update's adds.
	pl.context = clientContext(withoutOwnTerms(obj.JSONLDContext), doc.JSONLDContext, patch.JSONLDContext)
	obj.JSONLDContext = nil
	obj.Merge(patch, "id", "type", "attributedTo", "published", "@context", "context", "interactionPolicy")
	if err := p.updatePolicy(pl.actor, obj, patch); err != nil {
		return err
	}
	obj.Updated = now.Format(time.RFC3339)
	if patch.Has("content") || patch.Has("contentMap") {
		sanitizeContent(obj)
	}
	mediaIDs, err := p.attachments(ctx, pl, obj, current.ID)
	if err != nil {
		return err
	}
	pl.activity.JSONLDContext = contextFor(obj, pl.context)
	addr, _ := readAddressing(obj)
	addr.set(pl.activity, obj)
	if err := p.resolveAudience(ctx, pl, addr); err != nil {
		return err
	}
	if err := p.tagRecipients(ctx, pl, obj, addr); err != nil {
		return err
	}
	pl.objIRI = current.IRI
	pl.activity.Object = as.Embed(obj)
	pl.apply = func(ctx context.Context, tx *store.Tx, pl *plan) error {
		if err := p.addEarlierRecipients(ctx, tx, pl); err != nil {
			return err
		}
		body, err := objectBody(obj, pl.context)
		if err != nil {
			return err
		}
		err = tx.UpdateObject(ctx, pl.objIRI, body, pl.public, now)
		if errors.Is(err, store.ErrNotFound) {
			return inputErr("%s was deleted", pl.objIRI)
		}
		if err != nil {
			return err
		}
		if err := tx.AttachMedia(ctx, mediaIDs, current.ID); err != nil {
			return err
		}
		return tx.SetObjectTags(ctx, current.ID, hashtags(obj))
	}
	return nil
}

// planDelete turns an object the actor owns into a Tombstone and sends the
// Delete to every server that got the object.
func (p *Publisher) planDelete(ctx context.Context, pl *plan, doc *as.Object, now time.Time) error {
	current, err := p.ownObject(ctx, pl, doc.Object.ID)
	if err != nil {
		return err
	}
	obj, err := as.Parse([]byte(current.Body))
	if err != nil {
		return err
	}
	addr, _ := readAddressing(obj)
	addr.set(pl.activity)
	if err := p.resolveAudience(ctx, pl, addr); err != nil {
		return err
	}
	tombstone := &as.Object{ID: current.IRI, Type: as.Types{"Tombstone"}, FormerType: current.Type, Deleted: now.Format(time.RFC3339)}
	pl.objIRI = current.IRI
	pl.activity.Object = as.Embed(tombstone)
	pl.locals = nil // a Delete tells servers, not local inboxes
	pl.apply = func(ctx context.Context, tx *store.Tx, pl *plan) error {
		if err := p.holdDeleteOfUnapproved(ctx, tx, pl); err != nil {
			return err
		}
		if err := p.addEarlierRecipients(ctx, tx, pl); err != nil {
			return err
		}
		body, err := objectBody(tombstone, nil)
		if err != nil {
			return err
		}
		err = tx.TombstoneObject(ctx, pl.objIRI, body, now)
		if errors.Is(err, store.ErrNotFound) {
			return inputErr("%s is already deleted", pl.objIRI)
		}
		return err
	}
	return nil
}

// holdDeleteOfUnapproved narrows the Delete of a reply still waiting for
// a peer's approval (or rejected) to those who got the reply: the post's
// author alone (holdForApproval), as the reply itself went. Its whole
// audience never had the reply, and a Delete would hand them its id; nor
// do the relays get it, nor is it served (not public), for the same
// reason. addEarlierRecipients then adds the inboxes that got it.
func (p *Publisher) holdDeleteOfUnapproved(ctx context.Context, tx *store.Tx, pl *plan) error {
	held, err := tx.UnapprovedInteraction(ctx, pl.objIRI)
	if err != nil || !held {
		return err
	}
	pl.aud = delivery.Audience{}
	pl.public = false
	return nil
}

// ownObject loads an object the actor published and has not deleted.
func (p *Publisher) ownObject(ctx context.Context, pl *plan, iri string) (*store.Object, error) {
	if iri == "" {
		return nil, inputErr("the object must be given by its id")
	}
	if !p.ours(iri) {
		return nil, inputErr("%q is not an object on this server", iri)
	}
	o, err := p.DB.ObjectByIRI(ctx, iri)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, inputErr("no object %q", iri)
	case err != nil:
		return nil, err
	case o.ActorID != pl.actor.ID:
		return nil, inputErr("%q belongs to another actor", iri)
	case o.Deleted:
		return nil, inputErr("%q was deleted", iri)
	}
	return o, nil
}

// addEarlierRecipients adds every inbox that got an activity about the
// object, so its Update or Delete reaches everyone who has a copy, whoever
// follows the actor now.
func (p *Publisher) addEarlierRecipients(ctx context.Context, tx *store.Tx, pl *plan) error {
	inboxes, err := tx.InboxesThatGot(ctx, pl.objIRI)
	if err != nil {
		return err
	}
	pl.aud.Inboxes = append(pl.aud.Inboxes, inboxes...)
	return nil
}

// objectBody is the JSON an object is served as: with its own @context, and
// without bto and bcc.
func objectBody(obj *as.Object, client []any) (string, error) {
	o := obj.Clone()
	o.BTo, o.BCC = nil, nil
	o.JSONLDContext = contextFor(obj, client)
	b, err := as.Marshal(o)
	return string(b), err
}

// clientContext gathers what a client's @context (of the activity and of
// the object) adds to ActivityStreams: context URLs other than the AS2 one
// (passed on as given, never fetched) and embedded term definitions.
func clientContext(contexts ...json.RawMessage) []any {
	var out []any
	for _, raw := range contexts {
		var c any
		if raw != nil && json.Unmarshal(raw, &c) != nil {
			continue
		}
		list, _ := c.([]any)
		switch c.(type) {
		case string, map[string]any:
			list = []any{c}
		}
		for _, e := range list {
			if e == federation.ContextAS || slices.ContainsFunc(out, func(o any) bool { return reflect.DeepEqual(o, e) }) {
				continue
			}
			out = append(out, e)
		}
	}
	return out
}

// withoutOwnTerms is a stored @context without the term definitions
// contextFor adds, which are added again as the object needs them.
func withoutOwnTerms(raw json.RawMessage) json.RawMessage {
	var c any
	if json.Unmarshal(raw, &c) != nil {
		return nil
	}
	if _, ok := c.(string); ok {
		return raw
	}
	list, _ := c.([]any)
	if m, ok := c.(map[string]any); ok {
		list = []any{m}
	}
	var out []any
	for _, e := range list {
		if m, ok := e.(map[string]any); ok && ownTerms(m) {
			continue
		}
		out = append(out, e)
	}
	return contextJSON(out)
}

// ownTerms reports whether m defines only terms contextFor adds.
func ownTerms(m map[string]any) bool {
	for k := range m {
		_, quote := quoteTerms[k]
		if _, policy := policyContext[k]; k != "sensitive" && k != "toot" && k != "blurhash" && !policy && !quote {
			return false
		}
	}
	return true
}

// contextFor is the @context of an object and of the activity carrying it:
// ActivityStreams, what the client's context added (client), and
// Mastodon's terms for what Herald uses beyond AS2 (the sensitive flag and
// the BlurHash of attachments), so that a JSON-LD processor such as Fedify
// keeps them.
func contextFor(obj *as.Object, client []any) json.RawMessage {
	sensitive := obj.Has("sensitive")
	hasBlurhash := false
	for _, a := range obj.Attachment.Objects() {
		if b := a.Get("blurhash"); b != nil && string(b) != "null" {
			hasBlurhash = true
		}
	}
	policy := obj.Has("interactionPolicy")
	quoted := obj.Quoted() != ""
	ctx := append([]any{federation.ContextAS}, client...)
	if !sensitive && !hasBlurhash && !policy && !quoted {
		if len(ctx) == 1 {
			return contextJSON(federation.ContextAS)
		}
		return contextJSON(ctx)
	}
	terms := map[string]any{}
	if sensitive {
		terms["sensitive"] = "as:sensitive"
	}
	if hasBlurhash {
		terms["toot"] = "http://joinmastodon.org/ns#"
		terms["blurhash"] = "toot:blurhash"
	}
	if policy {
		for k, v := range policyContext {
			terms[k] = v
		}
	}
	if quoted {
		for k, v := range quoteTerms {
			terms[k] = v
		}
	}
	return contextJSON(append(ctx, terms))
}

// contextJSON is an @context as JSON.
func contextJSON(c any) json.RawMessage {
	b, _ := marshal(c) // strings, lists and maps of them
	return b
}

// marshal encodes JSON without escaping <, > and & (content is HTML, and
// \u003c in every post helps nobody).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
