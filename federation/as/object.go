// Package as is an ActivityStreams 2.0 document as Herald reads and writes
// it: one Object type for objects and activities alike (in ActivityStreams
// an activity is an object with an actor and an object), parsed once at
// the edge where a document comes in (the inbox, the outbox, the app API)
// and passed on typed.
//
// The properties Herald reads are fields, read the way servers actually
// send them: a property may hold a string IRI, an embedded object or a
// Link, or an array of them (Mastodon sends single values, JSON-LD
// compaction collapses one-element arrays, others always send arrays), and
// a text may come as a string, an array or a JSON-LD value object. Every
// other property (an app's own type's, a server's extension) is kept as
// the JSON it came as, and written back as it came. So is a typed property
// that nothing changed: it is written in the shape it came in (a string
// stays a string, an array an array, a null a null), and only a changed
// one is written from its field. A document round-trips in meaning
// whatever vocabulary it uses, and nothing Herald does not read is lost.
//
// Reading: obj.Type.First(), obj.Actor.ID, obj.Object.Embedded (nil for
// a reference), obj.To.IDs(); extension properties with Get, Has or
// Decode. Writing: assign the field (obj.Content = ...), or Set an
// extension property; Marshal writes the document with its keys sorted.
// A new typed property is one field and one line in properties
// (properties.go).
//
// The package imports no other Herald package.
package as

import (
	"encoding/json"
	"slices"
)

// Public is the special collection addressing everyone. Compaction against
// the AS2 context turns it into "as:Public", and some servers write just
// "Public"; IsPublic accepts all three.
const Public = "https://www.w3.org/ns/activitystreams#Public"

// ContextAS is the ActivityStreams JSON-LD context, the @context of every
// activity Herald sends.
const ContextAS = "https://www.w3.org/ns/activitystreams"

// IsPublic reports whether iri names the public collection.
func IsPublic(iri string) bool {
	return iri == Public || iri == "as:Public" || iri == "Public"
}

// Object is an ActivityStreams object or activity. The zero value is an
// empty document; Parse reads one. Fields hold the properties Herald
// reads, under their ActivityStreams names (the JSON name is in each
// field's comment); everything else is in the document's other
// properties (Get, Set). Copy with Clone, not by value.
type Object struct {
	// JSONLDContext is "@context" as JSON (a URL, an inline context or a
	// list of them); nil when the document has none.
	JSONLDContext json.RawMessage

	ID   string // "id"
	Type Types  // "type"

	Actor  Ref // "actor"
	Object Ref // "object"
	Target Ref // "target"

	// The audience: "to", "cc", "bto", "bcc", "audience".
	To, CC, BTo, BCC, Audience Refs

	AttributedTo Refs // "attributedTo"
	InReplyTo    Ref  // "inReplyTo"
	Context      Ref  // "context": the conversation it belongs to

	Published  string // "published"
	Updated    string // "updated"
	Deleted    string // "deleted" (a Tombstone's)
	FormerType string // "formerType" (a Tombstone's)

	Content    string  // "content"
	ContentMap LangMap // "contentMap"
	Summary    string  // "summary"
	SummaryMap LangMap // "summaryMap"
	Name       string  // "name"
	NameMap    LangMap // "nameMap"
	MediaType  string  // "mediaType"
	Source     Ref     // "source": what content was written from

	URL        Refs   // "url": a URL, a Link, or several
	Href       string // "href" (a Link's)
	Tag        Refs   // "tag": Mention, Hashtag, Emoji, ...
	Attachment Refs   // "attachment"
	Icon       Refs   // "icon"
	Image      Refs   // "image"
	Preview    Refs   // "preview"
	OneOf      Refs   // "oneOf": a poll's options, one answer
	AnyOf      Refs   // "anyOf": a poll's options, several answers

	// The post a quote post quotes, in the four spellings servers use:
	// FEP-044f's "quote", "quoteUrl" and "quoteUri" (Pleroma, Akkoma,
	// Fedibird) and Misskey's "_misskey_quote". Quoted reads them.
	Quote        Ref // "quote"
	QuoteURL     Ref // "quoteUrl"
	QuoteURI     Ref // "quoteUri"
	MisskeyQuote Ref // "_misskey_quote"

	// props is every property as it came, by name: the ones without a
	// field, and those with one as they were before anything changed
	// them (to write an unchanged one back in its own shape).
	props map[string]json.RawMessage
}

// NewActivity is an activity of type typ on object, the rest to be filled
// in (a client's Follow, Undo or Delete is no more).
func NewActivity(typ string, object Ref) *Object {
	return &Object{Type: Types{typ}, Object: object}
}

// Quoted is the id of the post o quotes, whichever property names it, or "".
func (o *Object) Quoted() string {
	for _, r := range []Ref{o.Quote, o.QuoteURL, o.QuoteURI, o.MisskeyQuote} {
		if r.ID != "" {
			return r.ID
		}
	}
	return ""
}

// Types is "type": one type or several (an app's own type beside an
// ActivityStreams one, ["Route", "Note"]). One is written as a string.
type Types []string

// First is the first type, or "".
func (t Types) First() string {
	if len(t) == 0 {
		return ""
	}
	return t[0]
}

// Has reports whether name is one of the types.
func (t Types) Has(name string) bool { return slices.Contains(t, name) }

// Ref is a property naming one thing: by its IRI, or embedded (an object,
// or a Link). ID is the IRI either way: the string, or the embedded
// object's id (a Link's href when it has no id), as parsed; Embed keeps
// the two together when code sets one. The zero Ref is no value.
type Ref struct {
	ID       string
	Embedded *Object // nil for a bare reference
}

// IRI is a reference by IRI alone.
func IRI(id string) Ref { return Ref{ID: id} }

// Embed is a reference embedding o; its ID is o's id (or href).
func Embed(o *Object) Ref {
	id := o.ID
	if id == "" {
		id = o.Href
	}
	return Ref{ID: id, Embedded: o}
}

// IsZero reports whether r holds nothing.
func (r Ref) IsZero() bool { return r.ID == "" && r.Embedded == nil }

// Refs is a property that may name several things (the audience, tags,
// attachments). An empty, non-nil Refs is a property present without
// values (as sent: [] or null); nil is no property.
type Refs []Ref

// IRIs is a list of references by IRI.
func IRIs(ids ...string) Refs {
	out := make(Refs, len(ids))
	for i, id := range ids {
		out[i] = IRI(id)
	}
	return out
}

// IDs is every IRI named, in order; entries without one (an attachment
// with only a url) are skipped.
func (rs Refs) IDs() []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		if r.ID != "" {
			out = append(out, r.ID)
		}
	}
	return out
}

// First is the first IRI named, or "".
func (rs Refs) First() string {
	for _, r := range rs {
		if r.ID != "" {
			return r.ID
		}
	}
	return ""
}

// Has reports whether iri is named.
func (rs Refs) Has(iri string) bool {
	return slices.ContainsFunc(rs, func(r Ref) bool { return r.ID == iri })
}

// HasPublic reports whether the public collection is named, in any of its
// spellings.
func (rs Refs) HasPublic() bool {
	return slices.ContainsFunc(rs, func(r Ref) bool { return IsPublic(r.ID) })
}

// Objects is the embedded objects, in order, skipping bare references.
func (rs Refs) Objects() []*Object {
	var out []*Object
	for _, r := range rs {
		if r.Embedded != nil {
			out = append(out, r.Embedded)
		}
	}
	return out
}

// OfType is the embedded objects of the given type (the Mention tags).
func (rs Refs) OfType(typ string) []*Object {
	var out []*Object
	for _, o := range rs.Objects() {
		if o.Type.Has(typ) {
			out = append(out, o)
		}
	}
	return out
}

// LangMap is a natural-language map, "contentMap" and its kin: text by
// language tag ({"en": "Hello", "pt-BR": "Olá"}). Only text values are
// read; an empty, non-nil LangMap is a property present without values.
type LangMap map[string]string

// hrefOrID is what IDOf reads of an embedded object: its id, or a Link's
// href, each only when it is a JSON string.
func hrefOrID(props map[string]json.RawMessage) string {
	if s, ok := jsonString(props["id"]); ok {
		return s
	}
	s, _ := jsonString(props["href"])
	return s
}
