package as

import (
	"encoding/json"
	"maps"
	"slices"
)

// Get is the JSON o writes for a property, nil when it has none. It is
// how code reads a property without a field (an app's own, "sensitive",
// "blurhash"); for a typed one it is the field's JSON.
func (o *Object) Get(name string) json.RawMessage {
	if raw, kept := o.kept(name); kept {
		return raw
	}
	p := byName[name]
	if p == nil || p.isZero(o) {
		return nil
	}
	w := newWriter()
	if err := w.field(p, o); err != nil {
		return nil
	}
	return w.b.Bytes()
}

// Has reports whether o has a property (null counts: it was sent).
func (o *Object) Has(name string) bool { return o.Get(name) != nil }

// RefsOf reads any property as Refs, as the typed Refs properties are
// read: every IRI and embedded object it names. It is for a property typed
// as one reference (an "actor") where every value it names counts.
func (o *Object) RefsOf(name string) Refs {
	raw := o.Get(name)
	if raw == nil {
		return nil
	}
	return readRefs(raw)
}

// Decode reads a property into v as json.Unmarshal would; it reports
// false, and leaves v alone, when o has no such property.
func (o *Object) Decode(name string, v any) (bool, error) {
	raw := o.Get(name)
	if raw == nil {
		return false, nil
	}
	return true, json.Unmarshal(raw, v)
}

// Set gives a property the JSON of v (encoded as Marshal encodes); a
// typed property's field is set to what that JSON reads as.
func (o *Object) Set(name string, v any) error {
	b, err := encode(v)
	if err != nil {
		return err
	}
	raw := json.RawMessage(b)
	if o.props == nil {
		o.props = map[string]json.RawMessage{}
	}
	o.props[name] = raw
	if p := byName[name]; p != nil {
		p.decode(o, raw)
	}
	return nil
}

// Delete removes a property.
func (o *Object) Delete(name string) {
	delete(o.props, name)
	if p := byName[name]; p != nil {
		p.clear(o)
	}
}

// Properties is the names of the properties o has, sorted.
func (o *Object) Properties() []string {
	return slices.DeleteFunc(o.names(), func(name string) bool { return !o.Has(name) })
}

// Clone is a copy of o whose properties can be set and deleted without
// changing o. Embedded objects and lists are shared, as in a copy of a
// map.
func (o *Object) Clone() *Object {
	c := *o
	c.props = maps.Clone(o.props)
	return &c
}

// Merge gives o every property patch has, except those named in keep,
// as patch has it (an Update's object replacing the stored one's).
func (o *Object) Merge(patch *Object, keep ...string) {
	for _, name := range patch.Properties() {
		if slices.Contains(keep, name) {
			continue
		}
		raw, had := patch.props[name]
		p := byName[name]
		if p != nil {
			p.set(o, p.get(patch))
		}
		if o.props == nil {
			o.props = map[string]json.RawMessage{}
		}
		if had {
			o.props[name] = raw
		} else {
			delete(o.props, name)
		}
	}
}
