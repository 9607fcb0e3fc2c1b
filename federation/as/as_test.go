package as_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"herald/federation"
	"herald/federation/as"
)

func parse(t testing.TB, s string) *as.Object {
	t.Helper()
	o, err := as.Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse(%s): %v", s, err)
	}
	return o
}

func marshal(t testing.TB, o *as.Object) string {
	t.Helper()
	b, err := as.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func generic(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// TestReadsEveryShape holds the typed fields to what Herald's map helpers
// (federation.IDOf, IDs, FirstString, Object) read from the same value,
// for every shape a server may send: so reading a typed field is reading
// the value as the rest of Herald always has.
func TestReadsEveryShape(t *testing.T) {
	values := []string{
		`"https://a.example/1"`, `""`, `null`, `42`, `true`, `[]`, `{}`,
		`{"id":"https://a.example/1","type":"Note"}`,
		`{"type":"Link","href":"https://a.example/h"}`,
		`{"id":{"id":"https://a.example/nested"},"href":"https://a.example/h"}`,
		`[{"type":"Note"},"https://a.example/2",{"id":"https://a.example/3"}]`,
		`["", "https://a.example/4"]`,
		`[["https://a.example/5"], {"id": "https://a.example/6"}]`,
		`["https://a.example/7", {"id": "https://a.example/8", "type": "Note"}]`,
		`{"@value":"hello","@language":"en"}`,
		`[{"@value":"x"}, "y"]`,
		`"caf\u00e9 \u003cp\u003e"`,
	}
	for _, v := range values {
		doc := `{"actor":` + v + `,"to":` + v + `,"content":` + v + `,"type":` + v + `,"id":` + v + `}`
		o := parse(t, doc)
		g := generic(t, v)
		if got, want := o.Actor.ID, federation.IDOf(g); got != want {
			t.Errorf("actor %s: ID %q, IDOf %q", v, got, want)
		}
		if got, want := o.ID, federation.IDOf(g); got != want {
			t.Errorf("id %s: %q, IDOf %q", v, got, want)
		}
		wantIDs := federation.IDs(g)
		if wantIDs == nil {
			wantIDs = []string{}
		}
		if got := o.To.IDs(); !reflect.DeepEqual(got, wantIDs) {
			t.Errorf("to %s: IDs %q, federation.IDs %q", v, got, wantIDs)
		}
		if got, want := o.Content, federation.FirstString(g); got != want {
			t.Errorf("content %s: %q, FirstString %q", v, got, want)
		}
		if got, want := o.Type.First(), federation.FirstString(g); got != want {
			t.Errorf("type %s: First %q, FirstString %q", v, got, want)
		}
		embedded := federation.Object(g)
		if (o.Actor.Embedded == nil) != (embedded == nil) {
			t.Errorf("actor %s: embedded %v, Object %v", v, o.Actor.Embedded, embedded)
		} else if embedded != nil {
			b, _ := json.Marshal(embedded)
			if got := marshal(t, o.Actor.Embedded); !reflect.DeepEqual(generic(t, got), generic(t, string(b))) {
				t.Errorf("actor %s: embedded %s, Object %s", v, got, b)
			}
		}
	}
}

// TestRoundTrip: a document nothing changed is written as it came, in
// meaning and in the shape of every property (a string stays a string, a
// one-element array an array, a null a null), extension properties and
// an app's own context included.
func TestRoundTrip(t *testing.T) {
	for _, doc := range []string{
		`{"@context":["https://www.w3.org/ns/activitystreams",{"trails":"https://trails.example/ns#","Route":"trails:Route","distance":{"@id":"trails:distance","@type":"http://www.w3.org/2001/XMLSchema#decimal"}}],"type":["Route","Note"],"name":"Ridge loop","distance":12.5,"difficulty":"moderate","elevation":12345678901234567890}`,
		`{"type":"Note","to":"https://www.w3.org/ns/activitystreams#Public","cc":["https://a.example/followers"],"summary":null,"inReplyTo":null,"tag":[],"attachment":{"type":"Document","url":"https://a.example/f.png"}}`,
		`{"type":["Note"],"content":["a","b"],"contentMap":{"en":"<p>x</p>","bad":5},"url":[{"type":"Link","href":"https://a.example/p","mediaType":"text/html"}],"attributedTo":"https://a.example/u"}`,
		`{"type":"Create","object":{"type":"Note","id":"https://a.example/n","content":"<p>hi & bye</p>","toot:x":{"y":[1,2,{"z":null}]}},"signature":{"type":"RsaSignature2017","signatureValue":"abc=="}}`,
		`{"id":5,"type":{"@value":"Note"},"actor":[],"to":42,"published":"2024-01-01T00:00:00Z","_misskey_quote":"https://m.example/notes/1"}`,
	} {
		o := parse(t, doc)
		out := marshal(t, o)
		if !reflect.DeepEqual(generic(t, out), generic(t, doc)) {
			t.Errorf("round trip changed the document:\n in  %s\n out %s", doc, out)
		}
		// Each property's own bytes are kept, not just its meaning.
		var in, got map[string]json.RawMessage
		json.Unmarshal([]byte(doc), &in)
		json.Unmarshal([]byte(out), &got)
		for k, v := range in {
			if string(got[k]) != string(v) {
				t.Errorf("%s: written as %s, came as %s", k, got[k], v)
			}
		}
	}
}

// TestChangedFields: a changed field is written from its value, in the
// shape Herald writes it (the audience and tags as arrays, attributedTo and
// one url as a value, one type as a string), a zeroed one is left out,
// keys sorted (an object in a changed list writes its own, sorted too);
// what nothing changed stays as it came.
func TestChangedFields(t *testing.T) {
	o := parse(t, `{"type":"Note","to":"https://b.example/u","bcc":["https://c.example/u"],"attributedTo":["https://a.example/x"],"content":"<b>hi</b>","x:ext":{"b":1,"a":2},"tag":{"type":"Hashtag","name":"#go","href":"https://a.example/tags/go"}}`)
	o.ID = "https://a.example/n/1"
	o.To = as.IRIs(as.Public)
	o.BCC = nil
	o.AttributedTo = as.IRIs("https://a.example/u")
	o.Tag = append(o.Tag, as.Embed(&as.Object{Type: as.Types{"Mention"}, Href: "https://b.example/u", Name: "@u@b.example"}))
	o.URL = as.Refs{as.IRI("https://a.example/@u/1")}
	want := `{"attributedTo":"https://a.example/u","content":"<b>hi</b>","id":"https://a.example/n/1",` +
		`"tag":[{"href":"https://a.example/tags/go","name":"#go","type":"Hashtag"},{"href":"https://b.example/u","name":"@u@b.example","type":"Mention"}],` +
		`"to":["https://www.w3.org/ns/activitystreams#Public"],"type":"Note","url":"https://a.example/@u/1","x:ext":{"b":1,"a":2}}`
	if got := marshal(t, o); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// json.Marshal escapes HTML afterwards, as it does a map's strings.
	b, _ := json.Marshal(o)
	if !strings.Contains(string(b), `\u003cb\u003ehi`) {
		t.Errorf("json.Marshal: %s", b)
	}
}

// TestEmbeddedChange: a change inside an embedded object is written (the
// parent writes the object from its field), the rest of it as it came
// (compact: Marshal compacts what it writes).
func TestEmbeddedChange(t *testing.T) {
	o := parse(t, `{"type":"Create","object":{"type":"Note","content":"<script>x</script>hi","z":[1, 2]},"to":"https://b.example/u"}`)
	o.Object.Embedded.Content = "hi"
	if got, want := marshal(t, o), `{"object":{"content":"hi","type":"Note","z":[1,2]},"to":"https://b.example/u","type":"Create"}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestExtensionProperties: Get, Has, Set, Delete, Decode and Merge on
// properties with and without a field.
func TestExtensionProperties(t *testing.T) {
	o := parse(t, `{"type":"Note","sensitive":false,"distance":12.5,"summary":null}`)
	if !o.Has("sensitive") || !o.Has("summary") || o.Has("blurhash") || o.Has("content") {
		t.Errorf("Has: sensitive %v summary %v blurhash %v content %v", o.Has("sensitive"), o.Has("summary"), o.Has("blurhash"), o.Has("content"))
	}
	var d float64
	if ok, err := o.Decode("distance", &d); !ok || err != nil || d != 12.5 {
		t.Errorf("Decode distance: %v %v %v", ok, err, d)
	}
	o.Set("blurhash", "LEHV6nWB2yk8")
	o.Set("name", "<b>Ridge</b>")
	o.Delete("sensitive")
	if o.Name != "<b>Ridge</b>" {
		t.Errorf("Set name: field %q", o.Name)
	}
	if got, want := marshal(t, o), `{"blurhash":"LEHV6nWB2yk8","distance":12.5,"name":"<b>Ridge</b>","summary":null,"type":"Note"}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := o.Properties(); !reflect.DeepEqual(got, []string{"blurhash", "distance", "name", "summary", "type"}) {
		t.Errorf("Properties: %q", got)
	}

	stored := parse(t, `{"id":"https://a.example/r","type":["Route","Note"],"distance":1,"difficulty":"easy","name":"R"}`)
	patch := parse(t, `{"id":"https://a.example/r","type":"Note","distance":14.2,"to":"https://b.example/u"}`)
	stored.Merge(patch, "id", "type")
	if got, want := marshal(t, stored), `{"difficulty":"easy","distance":14.2,"id":"https://a.example/r","name":"R","to":"https://b.example/u","type":["Route","Note"]}`; got != want {
		t.Errorf("Merge: got  %s\nwant %s", got, want)
	}
	c := stored.Clone()
	c.Delete("difficulty")
	c.Name = "S"
	if !stored.Has("difficulty") || stored.Name != "R" {
		t.Errorf("a clone's change reached the original")
	}
}

func TestQuotedAndDepth(t *testing.T) {
	if got := parse(t, `{"quoteUri":"https://p.example/objects/1"}`).Quoted(); got != "https://p.example/objects/1" {
		t.Errorf("Quoted: %q", got)
	}
	if got := parse(t, `{"_misskey_quote":"https://m.example/notes/1","quote":{"id":"https://q.example/1"}}`).Quoted(); got != "https://q.example/1" {
		t.Errorf("Quoted prefers quote: %q", got)
	}
	for s, want := range map[string]int{`{}`: 1, `{"a":[1]}`: 2, `{"a":"[[[{"}`: 1, `{"a":"\"[","b":{"c":[[]]}}`: 4} {
		if got := as.Depth([]byte(s)); got != want {
			t.Errorf("Depth(%s) = %d, want %d", s, got, want)
		}
	}
	for _, s := range []string{`[]`, `null`, `"x"`, `{`} {
		if _, err := as.Parse([]byte(s)); err == nil {
			t.Errorf("Parse(%s) took it", s)
		}
	}
}

// FuzzParse: whatever object comes in, what Marshal writes of it means
// the same (and parses again). A repeated key is read as encoding/json
// reads it: the last one wins.
func FuzzParse(f *testing.F) {
	f.Add(`{"type":"Create","object":{"type":"Note","tag":[{"type":"Mention","href":"https://a.example/u"}]},"to":"as:Public"}`)
	f.Add(`{"@context":"https://www.w3.org/ns/activitystreams","id":{"id":"x"},"actor":[["a"],{"href":"b"}],"contentMap":{"en":1}}`)
	f.Fuzz(func(t *testing.T, s string) {
		o, err := as.Parse([]byte(s))
		if err != nil {
			return
		}
		var in map[string]any
		if json.Unmarshal([]byte(s), &in) != nil {
			return
		}
		b, err := as.Marshal(o)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("Marshal wrote %s: %v", b, err)
		}
		if !reflect.DeepEqual(in, out) {
			t.Errorf("in  %s\nout %s", s, b)
		}
	})
}

// mastodonCreate is a Create as Mastodon 4 sends one: a Note with a
// mention, a hashtag, an attachment and its replies collection.
const mastodonCreate = `{"@context":["https://www.w3.org/ns/activitystreams",{"ostatus":"http://ostatus.org#","atomUri":"ostatus:atomUri","inReplyToAtomUri":"ostatus:inReplyToAtomUri","conversation":"ostatus:conversation","sensitive":"as:sensitive","toot":"http://joinmastodon.org/ns#","votersCount":"toot:votersCount","blurhash":"toot:blurhash","focalPoint":{"@container":"@list","@id":"toot:focalPoint"},"Hashtag":"as:Hashtag"}],` +
	`"id":"https://m.example/users/alice/statuses/1/activity","type":"Create","actor":"https://m.example/users/alice","published":"2026-03-01T12:00:00Z","to":["https://www.w3.org/ns/activitystreams#Public"],"cc":["https://m.example/users/alice/followers","https://h.example/users/bob"],` +
	`"object":{"id":"https://m.example/users/alice/statuses/1","type":"Note","summary":null,"inReplyTo":null,"published":"2026-03-01T12:00:00Z","url":"https://m.example/@alice/1","attributedTo":"https://m.example/users/alice","to":["https://www.w3.org/ns/activitystreams#Public"],"cc":["https://m.example/users/alice/followers","https://h.example/users/bob"],"sensitive":false,"atomUri":"https://m.example/users/alice/statuses/1","inReplyToAtomUri":null,"conversation":"tag:m.example,2026-03-01:objectId=1:objectType=Conversation",` +
	`"content":"<p><span class=\"h-card\"><a href=\"https://h.example/@bob\" class=\"u-url mention\">@<span>bob</span></a></span> A remote post for Herald's inbox to take in, with a <a href=\"https://m.example/tags/go\" class=\"mention hashtag\" rel=\"tag\">#<span>go</span></a> tag.</p>","contentMap":{"en":"<p>A remote post for Herald's inbox to take in.</p>"},` +
	`"attachment":[{"type":"Document","mediaType":"image/png","url":"https://m.example/system/media/1.png","name":"A diagram","blurhash":"UBL_:rOpGG-oBUNG,qRj2so|=eE1w^n4S5NH","focalPoint":[0.0,0.0],"width":1200,"height":800}],` +
	`"tag":[{"type":"Mention","href":"https://h.example/users/bob","name":"@bob@h.example"},{"type":"Hashtag","href":"https://m.example/tags/go","name":"#go"}],` +
	`"replies":{"id":"https://m.example/users/alice/statuses/1/replies","type":"Collection","first":{"type":"CollectionPage","next":"https://m.example/users/alice/statuses/1/replies?only_other_accounts=true&page=true","partOf":"https://m.example/users/alice/statuses/1/replies","items":[]}}}}`

// BenchmarkParse reads a Mastodon Create as the inbox does, beside
// decoding it into a map (what the inbox did before, twice).
func BenchmarkParse(b *testing.B) {
	body := []byte(mastodonCreate)
	b.Run("as.Parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := as.Parse(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("as.Marshal", func(b *testing.B) {
		o, _ := as.Parse(body)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := as.Marshal(o); err != nil {
				b.Fatal(err)
			}
		}
	})
}
