package timeline

import (
	"testing"
	"time"

	"herald/federation/as"
)

// parseDoc is a test document, typed.
func parseDoc(t *testing.T, js string) *as.Object {
	t.Helper()
	o, err := as.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestReaders reads what a status is made of from the typed document, in
// the shapes servers send: single values and arrays, Links, value objects.
func TestReaders(t *testing.T) {
	for _, tc := range []struct {
		name, doc                  string
		content, language, page    string
		tags                       []string
		source                     string
		sensitive                  bool
		conversation, endTime, cwt string
	}{
		{name: "Mastodon's note",
			doc: `{"id":"https://m.example/s/1","type":"Note","content":"<p>hi</p>","contentMap":{"en":"<p>hi</p>"},
				"url":"https://m.example/@a/1","sensitive":true,"summary":"cw &amp; more",
				"tag":[{"type":"Hashtag","name":"#Go"},{"type":"Mention","href":"https://x.example/u"},{"type":"Hashtag","name":"#go"}],
				"conversation":"tag:m.example,2024:objectId=1"}`,
			content: "<p>hi</p>", language: "en", page: "https://m.example/@a/1", tags: []string{"go"},
			sensitive: true, conversation: "tag:m.example,2024:objectId=1", cwt: "cw & more"},
		{name: "arrays, Links and a value object",
			doc: `{"id":"https://g.example/s/2","type":["Note"],"content":{"@value":"<p>yo</p>"},"contentMap":{"pt":"<p>oi</p>","de":"<p>yo</p>"},
				"url":[{"type":"Link","href":"https://g.example/s/2.json","mediaType":"application/json"},{"type":"Link","href":"https://g.example/@b/2"}],
				"tag":{"type":"Hashtag","name":"#One"},"sensitive":"true","conversation":["https://g.example/c/1"]}`,
			content: "<p>yo</p>", language: "de", page: "https://g.example/@b/2", tags: []string{"one"},
			conversation: "https://g.example/c/1"},
		{name: "an article with a name",
			doc:     `{"id":"https://w.example/a/3","type":"Article","name":"Title","url":"ftp://w.example/3"}`,
			content: `<p><strong>Title</strong></p><p><a href="https://w.example/a/3" rel="nofollow noopener" target="_blank">https://w.example/a/3</a></p>`,
			page:    "https://w.example/a/3"},
		{name: "a local post's source",
			doc:     `{"id":"https://h.example/o/4","type":"Note","content":"<p>x</p>","source":{"mediaType":"text/plain","content":"x"}}`,
			content: "<p>x</p>", page: "https://h.example/o/4", source: "x"},
		{name: "a source in another format",
			doc:  `{"id":"https://h.example/o/5","type":"Note","source":{"mediaType":"text/markdown","content":"*x*"}}`,
			page: "https://h.example/o/5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := parseDoc(t, tc.doc)
			content, language := contentOf(o)
			if content != tc.content || language != tc.language {
				t.Errorf("contentOf = %q, %q; want %q, %q", content, language, tc.content, tc.language)
			}
			if got := pageURL(o, o.ID); got != tc.page {
				t.Errorf("pageURL = %q, want %q", got, tc.page)
			}
			if got := hashtags(o); len(got) != len(tc.tags) || (len(got) > 0 && got[0] != tc.tags[0]) {
				t.Errorf("hashtags = %q, want %q", got, tc.tags)
			}
			if got := sourceText(o); got != tc.source {
				t.Errorf("sourceText = %q, want %q", got, tc.source)
			}
			if got := isTrue(o.Get("sensitive")); got != tc.sensitive {
				t.Errorf("sensitive = %v, want %v", got, tc.sensitive)
			}
			if got := textOf(o, "conversation"); got != tc.conversation {
				t.Errorf("conversation = %q, want %q", got, tc.conversation)
			}
			if got := plainText(o.Summary); got != tc.cwt {
				t.Errorf("spoiler text = %q, want %q", got, tc.cwt)
			}
		})
	}
}

// TestPollOf reads a Question's options, votes, end and voters.
func TestPollOf(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	one := parseDoc(t, `{"id":"https://m.example/q/1","type":"Question","endTime":"2026-02-01T00:00:00Z",
		"oneOf":[{"type":"Note","name":"yes","replies":{"type":"Collection","totalItems":3}},
			{"type":"Note","name":"no","replies":{"totalItems":"2"}},"https://m.example/not-an-option"]}`)
	p := pollOf(one, now)
	if p == nil || p.Multiple || len(p.Options) != 2 || p.Options[0].Title != "yes" || p.Options[0].Votes != 3 ||
		p.Options[1].Votes != 0 || p.VotersCount == nil || *p.VotersCount != 3 ||
		!p.ExpiresAt.Equal(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)) || !p.ClosedAt.IsZero() {
		t.Fatalf("one-choice poll: %+v", p)
	}
	many := parseDoc(t, `{"id":"https://m.example/q/2","type":"Question","closed":true,"votersCount":7,
		"anyOf":[{"name":"a","replies":{"totalItems":4}},{"name":"b"}]}`)
	p = pollOf(many, now)
	if p == nil || !p.Multiple || len(p.Options) != 2 || p.Options[0].Votes != 4 || p.VotersCount == nil ||
		*p.VotersCount != 7 || !p.ClosedAt.Equal(now) {
		t.Fatalf("multiple-choice poll: %+v", p)
	}
	if p := pollOf(parseDoc(t, `{"id":"https://m.example/s/3","type":"Note","oneOf":[{"name":"a"}]}`), now); p != nil {
		t.Fatalf("a Note's poll: %+v", p)
	}
}
