package federation

import (
	"strings"

	"herald/federation/as"
)

// ActivityStreams values arrive in several shapes for the same meaning: a
// property may hold a string IRI, an embedded object with an "id", or an
// array of either, and servers differ in which they send (Mastodon sends
// single values, Fedify and JSON-LD compaction collapse one-element arrays,
// others always send arrays). The helpers here read all of them in
// documents decoded into maps (actors, fetched documents); activities are
// read typed, by package as, with the same rules.

// Public is the special collection addressing everyone (as.Public).
const Public = as.Public

// ContextAS is the ActivityStreams JSON-LD context, the @context of every
// activity Herald sends (as.ContextAS).
const ContextAS = as.ContextAS

// IsPublic reports whether iri names the public collection, in any of its
// three spellings (as.IsPublic).
func IsPublic(iri string) bool { return as.IsPublic(iri) }

// IDOf returns the IRI a value refers to: the string itself, an object's
// "id" (or a Link's "href" when it has no id), or the first such IRI in an
// array. It returns "" when there is none.
func IDOf(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		if id, ok := v["id"].(string); ok {
			return id
		}
		if href, ok := v["href"].(string); ok {
			return href
		}
	case []any:
		for _, e := range v {
			if id := IDOf(e); id != "" {
				return id
			}
		}
	}
	return ""
}

// IDs returns every IRI a value refers to, in order, for addressing fields
// (to, cc) and other multi-valued references. Entries without an IRI are
// skipped. Besides decoded JSON it takes a []string, as Herald's own code
// builds documents.
func IDs(v any) []string {
	switch v := v.(type) {
	case []string:
		return append([]string(nil), v...)
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if id := IDOf(e); id != "" {
				out = append(out, id)
			}
		}
		return out
	default:
		if id := IDOf(v); id != "" {
			return []string{id}
		}
		return nil
	}
}

// FirstString returns a string value, the first string of an array, or a
// JSON-LD value object's "@value"; "" otherwise. It reads natural-language
// and type fields that may or may not be arrays.
func FirstString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		s, _ := v["@value"].(string)
		return s
	case []any:
		for _, e := range v {
			if s := FirstString(e); s != "" {
				return s
			}
		}
	}
	return ""
}

// Strings returns every string in a value that is a string or an array;
// "type" is sometimes an array ("Person" plus an extension type).
func Strings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Object returns v as an embedded object, or the first object of an array;
// nil when v is only a reference.
func Object(v any) map[string]any {
	switch v := v.(type) {
	case map[string]any:
		return v
	case []any:
		for _, e := range v {
			if m, ok := e.(map[string]any); ok {
				return m
			}
		}
	}
	return nil
}

// Objects returns the embedded objects in v (an object or an array), skipping
// bare references.
func Objects(v any) []map[string]any {
	switch v := v.(type) {
	case map[string]any:
		return []map[string]any{v}
	case []any:
		var out []map[string]any
		for _, e := range v {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

// actorTypes are the types Mastodon accepts as actors
// (FetchRemoteActorService::SUPPORTED_TYPES); Herald accepts the same set so
// it can talk to whatever Mastodon can.
var actorTypes = map[string]bool{
	"Application": true, "Group": true, "Organization": true, "Person": true, "Service": true,
}

// IsActorType reports whether t is an actor type. The "as:" prefixed form
// and the full IRI count too, for documents that were not compacted.
func IsActorType(t string) bool {
	t = strings.TrimPrefix(t, "as:")
	t = strings.TrimPrefix(t, "https://www.w3.org/ns/activitystreams#")
	return actorTypes[t]
}

// ActorType returns the first actor type among a document's "type" values,
// without prefix, or "" if it names none.
func ActorType(v any) string {
	for _, t := range Strings(v) {
		if IsActorType(t) {
			t = strings.TrimPrefix(t, "as:")
			return strings.TrimPrefix(t, "https://www.w3.org/ns/activitystreams#")
		}
	}
	return ""
}

// HasType reports whether a document's "type" (string or array) includes t.
func HasType(doc map[string]any, t string) bool {
	for _, s := range Strings(doc["type"]) {
		if s == t {
			return true
		}
	}
	return false
}
