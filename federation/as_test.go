package federation

import (
	"encoding/json"
	"reflect"
	"testing"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestIDOfAndIDs(t *testing.T) {
	cases := []struct {
		in    string
		id    string
		ids   []string
		first string
	}{
		{`"https://a.example/1"`, "https://a.example/1", []string{"https://a.example/1"}, "https://a.example/1"},
		{`{"id":"https://a.example/1","type":"Note"}`, "https://a.example/1", []string{"https://a.example/1"}, ""},
		{`{"type":"Link","href":"https://a.example/h"}`, "https://a.example/h", []string{"https://a.example/h"}, ""},
		{`[{"type":"Note"},"https://a.example/2",{"id":"https://a.example/3"}]`, "https://a.example/2", []string{"https://a.example/2", "https://a.example/3"}, "https://a.example/2"},
		{`[]`, "", []string{}, ""},
		{`null`, "", nil, ""},
		{`42`, "", nil, ""},
		{`{"@value":"hello","@language":"en"}`, "", nil, "hello"},
	}
	for _, c := range cases {
		v := decode(t, c.in)
		if got := IDOf(v); got != c.id {
			t.Errorf("IDOf(%s) = %q, want %q", c.in, got, c.id)
		}
		if got := IDs(v); !reflect.DeepEqual(got, c.ids) {
			t.Errorf("IDs(%s) = %#v, want %#v", c.in, got, c.ids)
		}
		if got := FirstString(v); got != c.first {
			t.Errorf("FirstString(%s) = %q, want %q", c.in, got, c.first)
		}
	}
}

func TestIsPublic(t *testing.T) {
	for _, s := range []string{Public, "as:Public", "Public"} {
		if !IsPublic(s) {
			t.Errorf("IsPublic(%q) = false", s)
		}
	}
	for _, s := range []string{"", "http://www.w3.org/ns/activitystreams#Public#x", "https://a.example/followers", "public"} {
		if IsPublic(s) {
			t.Errorf("IsPublic(%q) = true", s)
		}
	}
}

func TestActorTypes(t *testing.T) {
	for _, s := range []string{"Person", "Service", "Application", "Group", "Organization", "as:Person", "https://www.w3.org/ns/activitystreams#Group"} {
		if !IsActorType(s) {
			t.Errorf("IsActorType(%q) = false", s)
		}
	}
	for _, s := range []string{"Note", "Tombstone", "person", ""} {
		if IsActorType(s) {
			t.Errorf("IsActorType(%q) = true", s)
		}
	}
	if got := ActorType(decode(t, `["schema:Thing","as:Service"]`)); got != "Service" {
		t.Errorf("ActorType(array) = %q", got)
	}
	if got := ActorType(decode(t, `"Note"`)); got != "" {
		t.Errorf("ActorType(Note) = %q", got)
	}
	doc := decode(t, `{"type":["Person","foo:Bot"]}`).(map[string]any)
	if !HasType(doc, "foo:Bot") || HasType(doc, "Note") {
		t.Error("HasType")
	}
}

func TestObjects(t *testing.T) {
	v := decode(t, `["https://a.example/k",{"id":"k1"},{"id":"k2"}]`)
	if got := Objects(v); len(got) != 2 || got[1]["id"] != "k2" {
		t.Errorf("Objects = %v", got)
	}
	if got := Object(v); got["id"] != "k1" {
		t.Errorf("Object = %v", got)
	}
	if Object(decode(t, `"https://a.example/k"`)) != nil {
		t.Error("Object(string) != nil")
	}
	if got := Strings(decode(t, `["a",1,"b"]`)); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("Strings = %v", got)
	}
}
