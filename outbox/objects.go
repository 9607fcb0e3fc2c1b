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
	"herald/store"
)

// planCreate publishes a new object: Herald assigns its id, attributedTo and
// published, and addresses it publicly (to as:Public, cc the followers)
// unless the client addressed it.
func (p *Publisher) planCreate(ctx context.Context, pl *plan, doc map[string]any, now time.Time) error {
	obj, ok := doc["object"].(map[string]any)
	if !ok {
		return inputErr("a Create needs an embedded object (a Note, Article, ...), not a reference")
	}
	otype := federation.FirstString(obj["type"])
	if otype == "" || asActivityTypes[otype] {
		return inputErr("a Create needs an object, not %q", otype)
	}
	if id := federation.IDOf(obj["id"]); id != "" && !p.ours(id) {
		return inputErr("the object's id %q is not on this server; leave ids out and Herald assigns them", id)
	}
	if by := federation.IDOf(obj["attributedTo"]); by != "" && by != p.Instance.ActorID(pl.actor.Name) {
		return inputErr("the object must be attributed to %s, not %q", p.Instance.ActorID(pl.actor.Name), by)
	}
	obj = clone(obj)
	// The client's context (an app's own terms) goes with the object
	// wherever it is stored, served and delivered; Herald never fetches it.
	pl.context = clientContext(doc["@context"], obj["@context"])
	delete(obj, "@context")
	obj["id"] = p.Instance.NewID(pl.actor.Name, "statuses", now)
	obj["attributedTo"] = p.Instance.ActorID(pl.actor.Name)
	if _, ok := obj["published"]; !ok {
		obj["published"] = now.Format(time.RFC3339)
	}
	addr, present := readAddressing(doc, obj)
	if addr.empty() {
		if present {
			return inputErr("the addressing (to, cc, bto, bcc, audience) names no recipient and is not public")
		}
		addr = p.publicDefault(pl.actor)
	}
	delete(obj, "context") // Herald's to assign (thread_context.go)
	extra, err := p.author(ctx, pl.actor, obj)
	if err != nil {
		return err
	}
	addr.addRecipients(extra, p.Instance.FollowersURL(pl.actor.Name))
	mediaIDs, err := p.attachments(ctx, pl, obj, 0)
	if err != nil {
		return err
	}
	pl.activity["@context"] = contextFor(obj, pl.context)
	addr.set(pl.activity, obj)
	if err := p.resolveAudience(ctx, pl, addr); err != nil {
		return err
	}
	if err := p.tagRecipients(ctx, pl, obj, addr); err != nil {
		return err
	}
	setThreadContext(obj, federation.IDOf(obj["inReplyTo"]) != "", federation.IDOf(obj["context"]), pl.public)
	obj["interactionPolicy"] = InteractionPolicy(pl.public, p.Instance.ActorID(pl.actor.Name))
	pl.activity["@context"] = contextFor(obj, pl.context) // with the policy's terms
	pl.objIRI = obj["id"].(string)
	pl.activity["object"] = obj
	pl.apply = func(ctx context.Context, tx *store.Tx, pl *plan) error {
		o := &store.Object{IRI: pl.objIRI, ActorID: pl.actor.ID, Type: otype, Body: objectBody(obj, pl.context), Public: pl.public}
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
func (p *Publisher) planUpdate(ctx context.Context, pl *plan, doc map[string]any, now time.Time) error {
	patch, ok := doc["object"].(map[string]any)
	if !ok {
		return inputErr("an Update needs the whole updated object embedded")
	}
	current, err := p.ownObject(ctx, pl, federation.IDOf(patch))
	if err != nil {
		return err
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(current.Body), &obj); err != nil {
		return err
	}
	// The object keeps the client's context it was created with, and gains
	// what the Update's adds.
	pl.context = clientContext(withoutOwnTerms(obj["@context"]), doc["@context"], patch["@context"])
	delete(obj, "@context")
	for k, v := range patch {
		switch k {
		case "id", "type", "attributedTo", "published", "@context", "context", "interactionPolicy":
		default:
			obj[k] = v
		}
	}
	obj["updated"] = now.Format(time.RFC3339)
	_, content := patch["content"]
	if _, contentMap := patch["contentMap"]; content || contentMap {
		sanitizeContent(obj)
	}
	mediaIDs, err := p.attachments(ctx, pl, obj, current.ID)
	if err != nil {
		return err
	}
	pl.activity["@context"] = contextFor(obj, pl.context)
	addr, _ := readAddressing(obj)
	addr.set(pl.activity, obj)
	if err := p.resolveAudience(ctx, pl, addr); err != nil {
		return err
	}
	if err := p.tagRecipients(ctx, pl, obj, addr); err != nil {
		return err
	}
	pl.objIRI = current.IRI
	pl.activity["object"] = obj
	pl.apply = func(ctx context.Context, tx *store.Tx, pl *plan) error {
		if err := p.addEarlierRecipients(ctx, tx, pl); err != nil {
			return err
		}
		err := tx.UpdateObject(ctx, pl.objIRI, objectBody(obj, pl.context), pl.public, now)
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
func (p *Publisher) planDelete(ctx context.Context, pl *plan, doc map[string]any, now time.Time) error {
	current, err := p.ownObject(ctx, pl, federation.IDOf(doc["object"]))
	if err != nil {
		return err
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(current.Body), &obj); err != nil {
		return err
	}
	addr, _ := readAddressing(obj)
	addr.set(pl.activity)
	if err := p.resolveAudience(ctx, pl, addr); err != nil {
		return err
	}
	tombstone := map[string]any{
		"id":         current.IRI,
		"type":       "Tombstone",
		"formerType": current.Type,
		"deleted":    now.Format(time.RFC3339),
	}
	pl.objIRI = current.IRI
	pl.activity["object"] = tombstone
	pl.locals = nil // a Delete tells servers, not local inboxes
	pl.apply = func(ctx context.Context, tx *store.Tx, pl *plan) error {
		if err := p.addEarlierRecipients(ctx, tx, pl); err != nil {
			return err
		}
		err := tx.TombstoneObject(ctx, pl.objIRI, objectBody(tombstone, nil), now)
		if errors.Is(err, store.ErrNotFound) {
			return inputErr("%s is already deleted", pl.objIRI)
		}
		return err
	}
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
func objectBody(obj map[string]any, client []any) string {
	o := clone(obj)
	delete(o, "bto")
	delete(o, "bcc")
	o["@context"] = contextFor(obj, client)
	b, _ := marshal(o)
	return string(b)
}

// clientContext gathers what a client's @context (of the activity and of
// the object) adds to ActivityStreams: context URLs other than the AS2 one
// (passed on as given, never fetched) and embedded term definitions.
func clientContext(contexts ...any) []any {
	var out []any
	for _, c := range contexts {
		list := asTagList(c)
		if s, ok := c.(string); ok {
			list = []any{s}
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

// withoutOwnTerms drops from a stored @context the term definitions
// contextFor adds, which are added again as the object needs them.
func withoutOwnTerms(c any) any {
	list := asTagList(c)
	if s, ok := c.(string); ok {
		return s
	}
	var out []any
	for _, e := range list {
		if m, ok := e.(map[string]any); ok && ownTerms(m) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// ownTerms reports whether m defines only terms contextFor adds.
func ownTerms(m map[string]any) bool {
	for k := range m {
		if _, policy := policyContext[k]; k != "sensitive" && k != "toot" && k != "blurhash" && !policy {
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
func contextFor(obj map[string]any, client []any) any {
	_, sensitive := obj["sensitive"]
	hasBlurhash := false
	for _, a := range asTagList(obj["attachment"]) {
		if m, ok := a.(map[string]any); ok && m["blurhash"] != nil {
			hasBlurhash = true
		}
	}
	_, policy := obj["interactionPolicy"]
	ctx := append([]any{federation.ContextAS}, client...)
	if !sensitive && !hasBlurhash && !policy {
		if len(ctx) == 1 {
			return federation.ContextAS
		}
		return ctx
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
	return append(ctx, terms)
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

// clone copies a document's top level.
func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
