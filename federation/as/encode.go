package as

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
)

// MarshalJSON writes the document with its properties sorted by name, as
// encoding/json writes a map: a typed property that nothing changed as it
// came (in its own shape), a changed one from its field (left out when
// the field is zero), every other property as it came. Strings are
// written without escaping <, > and & (json.Marshal escapes them
// afterwards; an Encoder with SetEscapeHTML(false) does not).
func (o *Object) MarshalJSON() ([]byte, error) {
	w := newWriter()
	if err := w.object(o); err != nil {
		return nil, err
	}
	return w.b.Bytes(), nil
}

// Marshal is o's JSON as Herald stores and sends it: compact, keys
// sorted, <, > and & as they are (content is HTML).
func Marshal(o *Object) ([]byte, error) { return encode(o) }

// encode is v's JSON as Marshal writes it: compact, <, > and & as they
// are; Object.Set encodes a property's value the same way.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// writer writes JSON into b, its strings through enc (encoding/json's
// escaping, without HTML escaping).
type writer struct {
	b   *bytes.Buffer
	enc *json.Encoder
}

func newWriter() *writer {
	b := new(bytes.Buffer)
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	return &writer{b: b, enc: enc}
}

// string writes s as a JSON string.
func (w *writer) string(s string) {
	w.enc.Encode(s) // a string always encodes
	w.b.Truncate(w.b.Len() - 1)
}

// names is every property o writes, sorted.
func (o *Object) names() []string {
	names := make([]string, 0, len(o.props)+8)
	for name := range o.props {
		names = append(names, name)
	}
	for i := range properties {
		p := &properties[i]
		if _, had := o.props[p.name]; !had && !p.isZero(o) {
			names = append(names, p.name)
		}
	}
	slices.Sort(names)
	return names
}

// kept is the JSON o keeps for a property as it came, if it writes that:
// a property without a field, or one whose field still holds what it was
// read as.
func (o *Object) kept(name string) (json.RawMessage, bool) {
	raw, had := o.props[name]
	if !had {
		return nil, false
	}
	p := byName[name]
	if p == nil || reflect.DeepEqual(p.read(raw), p.get(o)) {
		return raw, true
	}
	return nil, false
}

// object writes o.
func (w *writer) object(o *Object) error {
	w.b.WriteByte('{')
	n := 0
	for _, name := range o.names() {
		raw, kept := o.kept(name)
		p := byName[name]
		if !kept && (p == nil || p.isZero(o)) {
			continue
		}
		if n > 0 {
			w.b.WriteByte(',')
		}
		n++
		w.string(name)
		w.b.WriteByte(':')
		if kept {
			w.b.Write(raw)
			continue
		}
		if err := w.field(p, o); err != nil {
			return err
		}
	}
	w.b.WriteByte('}')
	return nil
}

// field writes o's field of p, which is not zero.
func (w *writer) field(p *property, o *Object) error {
	switch v := p.get(o).(type) {
	case string:
		w.string(v)
	case Types:
		if len(v) == 1 {
			w.string(v[0])
			return nil
		}
		w.b.WriteByte('[')
		for i, t := range v {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.string(t)
		}
		w.b.WriteByte(']')
	case Ref:
		return w.ref(v)
	case Refs:
		return w.refs(v, p.kind == kindRefList)
	case LangMap:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		w.b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.string(k)
			w.b.WriteByte(':')
			w.string(v[k])
		}
		w.b.WriteByte('}')
	case json.RawMessage:
		w.b.Write(v)
	}
	return nil
}

// ref writes a reference: the embedded object, or the IRI.
func (w *writer) ref(r Ref) error {
	if r.Embedded != nil {
		return w.object(r.Embedded)
	}
	w.string(r.ID)
	return nil
}

// refs writes a list of references (array: as an array even with one),
// skipping zero ones.
func (w *writer) refs(rs Refs, array bool) error {
	rs = slices.DeleteFunc(slices.Clone(rs), Ref.IsZero)
	if len(rs) == 1 && !array {
		return w.ref(rs[0])
	}
	w.b.WriteByte('[')
	for i, r := range rs {
		if i > 0 {
			w.b.WriteByte(',')
		}
		if err := w.ref(r); err != nil {
			return err
		}
	}
	w.b.WriteByte(']')
	return nil
}
