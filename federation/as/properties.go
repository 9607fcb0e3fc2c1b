package as

import "encoding/json"

// kind is how a typed property is read from JSON and written back.
type kind uint8

const (
	// kindText is a string field read from a string, the first text of
	// an array, or a JSON-LD value object's "@value".
	kindText kind = iota
	// kindIRI is a string field read from a string, an object's "id" (a
	// Link's "href" when it has none), or the first of an array.
	kindIRI
	kindTypes // a Types field
	kindRef   // a Ref field
	// kindRefs is a Refs field; one value is written as a value
	// (attributedTo, url, icon).
	kindRefs
	// kindRefList is a Refs field written as an array even with one
	// value (the audience, tags, attachments), as Mastodon writes them.
	kindRefList
	kindLangMap // a LangMap field
	kindJSON    // a json.RawMessage field, kept as it is
)

// property is one typed property: its JSON name, how it reads and
// writes, and its field in an Object.
type property struct {
	name  string
	kind  kind
	field func(*Object) any // a pointer to the field, of the kind's type
}

// properties are the typed properties. Typing another is one field in
// Object and one line here: its JSON name, its kind, and the field. It is
// then read when a document is parsed and written back as the rest are
// (as it came while unchanged); an interaction policy or a quote's
// authorization is an embedded object (kindRef), whose own properties its
// Object holds.
var properties = []property{
	{"@context", kindJSON, func(o *Object) any { return &o.JSONLDContext }},
	{"id", kindIRI, func(o *Object) any { return &o.ID }},
	{"type", kindTypes, func(o *Object) any { return &o.Type }},
	{"actor", kindRef, func(o *Object) any { return &o.Actor }},
	{"object", kindRef, func(o *Object) any { return &o.Object }},
	{"target", kindRef, func(o *Object) any { return &o.Target }},
	{"to", kindRefList, func(o *Object) any { return &o.To }},
	{"cc", kindRefList, func(o *Object) any { return &o.CC }},
	{"bto", kindRefList, func(o *Object) any { return &o.BTo }},
	{"bcc", kindRefList, func(o *Object) any { return &o.BCC }},
	{"audience", kindRefList, func(o *Object) any { return &o.Audience }},
	{"attributedTo", kindRefs, func(o *Object) any { return &o.AttributedTo }},
	{"inReplyTo", kindRef, func(o *Object) any { return &o.InReplyTo }},
	{"context", kindRef, func(o *Object) any { return &o.Context }},
	{"published", kindText, func(o *Object) any { return &o.Published }},
	{"updated", kindText, func(o *Object) any { return &o.Updated }},
	{"deleted", kindText, func(o *Object) any { return &o.Deleted }},
	{"formerType", kindText, func(o *Object) any { return &o.FormerType }},
	{"content", kindText, func(o *Object) any { return &o.Content }},
	{"contentMap", kindLangMap, func(o *Object) any { return &o.ContentMap }},
	{"summary", kindText, func(o *Object) any { return &o.Summary }},
	{"summaryMap", kindLangMap, func(o *Object) any { return &o.SummaryMap }},
	{"name", kindText, func(o *Object) any { return &o.Name }},
	{"nameMap", kindLangMap, func(o *Object) any { return &o.NameMap }},
	{"mediaType", kindText, func(o *Object) any { return &o.MediaType }},
	{"source", kindRef, func(o *Object) any { return &o.Source }},
	{"url", kindRefs, func(o *Object) any { return &o.URL }},
	{"href", kindIRI, func(o *Object) any { return &o.Href }},
	{"tag", kindRefList, func(o *Object) any { return &o.Tag }},
	{"attachment", kindRefList, func(o *Object) any { return &o.Attachment }},
	{"icon", kindRefs, func(o *Object) any { return &o.Icon }},
	{"image", kindRefs, func(o *Object) any { return &o.Image }},
	{"preview", kindRefs, func(o *Object) any { return &o.Preview }},
	{"oneOf", kindRefList, func(o *Object) any { return &o.OneOf }},
	{"anyOf", kindRefList, func(o *Object) any { return &o.AnyOf }},
	{"quote", kindRef, func(o *Object) any { return &o.Quote }},
	{"quoteUrl", kindRef, func(o *Object) any { return &o.QuoteURL }},
	{"quoteUri", kindRef, func(o *Object) any { return &o.QuoteURI }},
	{"_misskey_quote", kindRef, func(o *Object) any { return &o.MisskeyQuote }},
}

// byName finds a typed property by its JSON name.
var byName = func() map[string]*property {
	m := make(map[string]*property, len(properties))
	for i := range properties {
		m[properties[i].name] = &properties[i]
	}
	return m
}()

// decode reads raw into o's field.
func (p *property) decode(o *Object, raw json.RawMessage) {
	switch f := p.field(o).(type) {
	case *string:
		if p.kind == kindIRI {
			*f = readIRI(raw)
		} else {
			*f = readText(raw)
		}
	case *Types:
		*f = readTypes(raw)
	case *Ref:
		*f = readRef(raw)
	case *Refs:
		*f = readRefs(raw)
	case *LangMap:
		*f = readLangMap(raw)
	case *json.RawMessage:
		*f = raw
	}
}

// get is the value of o's field.
func (p *property) get(o *Object) any {
	switch f := p.field(o).(type) {
	case *string:
		return *f
	case *Types:
		return *f
	case *Ref:
		return *f
	case *Refs:
		return *f
	case *LangMap:
		return *f
	case *json.RawMessage:
		return *f
	}
	return nil
}

// set gives o's field the value v (of the field's type, as get returns it).
func (p *property) set(o *Object, v any) {
	switch f := p.field(o).(type) {
	case *string:
		*f = v.(string)
	case *Types:
		*f = v.(Types)
	case *Ref:
		*f = v.(Ref)
	case *Refs:
		*f = v.(Refs)
	case *LangMap:
		*f = v.(LangMap)
	case *json.RawMessage:
		*f = v.(json.RawMessage)
	}
}

// clear makes o's field the zero value: no property.
func (p *property) clear(o *Object) {
	switch f := p.field(o).(type) {
	case *string:
		*f = ""
	case *Types:
		*f = nil
	case *Ref:
		*f = Ref{}
	case *Refs:
		*f = nil
	case *LangMap:
		*f = nil
	case *json.RawMessage:
		*f = nil
	}
}

// isZero reports whether o's field holds no value, so that no property is
// written for it.
func (p *property) isZero(o *Object) bool {
	switch f := p.field(o).(type) {
	case *string:
		return *f == ""
	case *Types:
		return len(*f) == 0
	case *Ref:
		return f.IsZero()
	case *Refs:
		return len(*f) == 0
	case *LangMap:
		return len(*f) == 0
	case *json.RawMessage:
		return len(*f) == 0
	}
	return true
}

// read is the value raw reads as, for comparing with a field's.
func (p *property) read(raw json.RawMessage) any {
	var scratch Object
	p.decode(&scratch, raw)
	return p.get(&scratch)
}
