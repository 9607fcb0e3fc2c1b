package as

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// ErrNotObject is the error of Parse for JSON that is not an object.
var ErrNotObject = errors.New("not a JSON object")

// Parse reads a JSON object as a document. Any JSON object is one: a
// typed property whose value is in no shape Herald reads is left zero in
// its field and written back as it came. It does no JSON-LD processing
// (federation.Compact does, for documents that need it). The document
// keeps b's bytes for the properties it holds as they came: b must not
// change afterwards.
func Parse(b []byte) (*Object, error) {
	if !json.Valid(b) {
		var v any
		return nil, json.Unmarshal(b, &v) // the syntax error, located
	}
	if first(b) != '{' {
		return nil, ErrNotObject
	}
	return fromProps(members(b)), nil
}

// fromProps is the document whose properties are props.
func fromProps(props map[string]json.RawMessage) *Object {
	o := &Object{props: props}
	for name, raw := range props {
		if p := byName[name]; p != nil {
			p.decode(o, raw)
		}
	}
	return o
}

// parseEmbedded reads an embedded object (raw, valid JSON, starts with '{').
func parseEmbedded(raw json.RawMessage) *Object { return fromProps(members(raw)) }

// Depth is how deeply a JSON text nests objects and arrays: {} is 1,
// {"a": [1]} is 2.
func Depth(b []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// first is the first byte of a JSON value, 0 for none.
func first(raw json.RawMessage) byte {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

// jsonString is raw as a string, if it is a JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if inner := raw[1 : len(raw)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true // what json.Unmarshal gives, without its cost
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// The readers below take JSON that Parse validated, so they split it
// without checking it again: what encoding/json would do in two passes
// per level (check, then decode) is one pass here.

// skipSpace is the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue is the index just past the JSON value that starts at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		for i++; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return i
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipValue(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
	}
	return i
}

// members is a JSON object's properties, by name (the last of a repeated
// one, as encoding/json has it), their values slices of raw; nil if raw
// is not an object.
func members(raw json.RawMessage) map[string]json.RawMessage {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil
	}
	m := map[string]json.RawMessage{}
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] == '"'; {
		end := skipValue(raw, i)
		key, _ := jsonString(raw[i:end])
		i = skipSpace(raw, end) + 1 // the colon
		i = skipSpace(raw, i)
		end = skipValue(raw, i)
		m[key] = raw[i:end]
		if i = skipSpace(raw, end); i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return m
}

// elements is a JSON array's values, slices of raw; nil if raw is not an
// array.
func elements(raw json.RawMessage) []json.RawMessage {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil
	}
	var list []json.RawMessage
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] != ']'; {
		end := skipValue(raw, i)
		list = append(list, raw[i:end])
		if i = skipSpace(raw, end); i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return list
}

// readText reads a natural-language or type value: a string, the first
// text of an array, or a JSON-LD value object's "@value"; "" otherwise.
func readText(raw json.RawMessage) string {
	switch first(raw) {
	case '"':
		s, _ := jsonString(raw)
		return s
	case '{':
		s, _ := jsonString(members(raw)["@value"])
		return s
	case '[':
		for _, e := range elements(raw) {
			if s := readText(e); s != "" {
				return s
			}
		}
	}
	return ""
}

// readIRI reads what a value refers to: the string itself, an object's
// "id" (or a Link's "href" when it has no id), or the first such IRI of
// an array; "" when there is none.
func readIRI(raw json.RawMessage) string {
	switch first(raw) {
	case '"':
		s, _ := jsonString(raw)
		return s
	case '{':
		return hrefOrID(members(raw))
	case '[':
		for _, e := range elements(raw) {
			if id := readIRI(e); id != "" {
				return id
			}
		}
	}
	return ""
}

// embedParsed is a reference to a parsed embedded object, by the id or
// href it came with (a JSON string; anything else names nothing).
func embedParsed(o *Object) Ref { return Ref{ID: hrefOrID(o.props), Embedded: o} }

// readTypes reads "type": a string, or the texts of an array.
func readTypes(raw json.RawMessage) Types {
	t := Types{}
	switch first(raw) {
	case '[':
		for _, e := range elements(raw) {
			if s := readText(e); s != "" {
				t = append(t, s)
			}
		}
	default:
		if s := readText(raw); s != "" {
			t = append(t, s)
		}
	}
	return t
}

// readRef reads a property naming one thing. Of an array, the IRI is the
// first IRI and the embedded object the first object, as a reader of one
// value takes each.
func readRef(raw json.RawMessage) Ref {
	switch first(raw) {
	case '"':
		s, _ := jsonString(raw)
		return Ref{ID: s}
	case '{':
		return embedParsed(parseEmbedded(raw))
	case '[':
		var r Ref
		for _, e := range elements(raw) {
			if first(e) == '{' {
				o := parseEmbedded(e)
				if r.Embedded == nil {
					r.Embedded = o
				}
				if r.ID == "" {
					r.ID = hrefOrID(o.props)
				}
			} else if r.ID == "" {
				r.ID = readIRI(e)
			}
		}
		return r
	}
	return Ref{}
}

// readRefs reads a property naming several things: every IRI and every
// embedded object (with an id or not: a tag, an attachment), in order.
// Anything else is skipped; present without any, it is an empty Refs.
func readRefs(raw json.RawMessage) Refs {
	rs := Refs{}
	add := func(e json.RawMessage) {
		switch first(e) {
		case '{':
			rs = append(rs, embedParsed(parseEmbedded(e)))
		case '"', '[':
			if id := readIRI(e); id != "" {
				rs = append(rs, IRI(id))
			}
		}
	}
	if first(raw) == '[' {
		for _, e := range elements(raw) {
			add(e)
		}
	} else {
		add(raw)
	}
	return rs
}

// readLangMap reads a natural-language map's texts.
func readLangMap(raw json.RawMessage) LangMap {
	m := LangMap{}
	for lang, v := range members(raw) {
		if s, ok := jsonString(v); ok {
			m[lang] = s
		}
	}
	return m
}

// EachKey calls visit with every key of every object in the JSON text b
// (valid JSON: a document's, as Parse took it) and the depth of the object
// holding it: the containers, objects and arrays alike, around that
// object (0 for the top level's keys). visit returns false to skip the
// key's value. It is how a document is searched for keys without decoding
// it (federation's test for JSON-LD that needs expanding).
func EachKey(b []byte, visit func(key string, depth int) bool) {
	eachKey(b, skipSpace(b, 0), 0, visit)
}

// eachKey walks the value at b[i], at depth, and returns the index past it.
func eachKey(b []byte, i, depth int, visit func(string, int) bool) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '{':
		for i = skipSpace(b, i+1); i < len(b) && b[i] == '"'; {
			end := skipValue(b, i)
			key, _ := jsonString(b[i:end])
			i = skipSpace(b, skipSpace(b, end)+1)
			if visit(key, depth) {
				end = eachKey(b, i, depth+1, visit)
			} else {
				end = skipValue(b, i)
			}
			if i = skipSpace(b, end); i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
			}
		}
		return i + 1
	case '[':
		for i = skipSpace(b, i+1); i < len(b) && b[i] != ']'; {
			end := eachKey(b, i, depth+1, visit)
			if i = skipSpace(b, end); i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
			}
		}
		return i + 1
	}
	return skipValue(b, i)
}
