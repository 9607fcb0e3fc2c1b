package compose

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"herald/federation/as"
)

// directory is the fake at the network edge: what WebFinger would answer.
type directory struct {
	accounts map[string]Mention
	calls    []string
}

func (d *directory) resolve(_ context.Context, handle string) (Mention, error) {
	d.calls = append(d.calls, handle)
	m, ok := d.accounts[strings.ToLower(handle)] // WebFinger is case-insensitive
	if !ok {
		return Mention{}, fmt.Errorf("webfinger: %s: not found", handle)
	}
	return m, nil
}

func newDirectory() *directory {
	return &directory{accounts: map[string]Mention{
		"gus@gts.example": {ID: "https://gts.example/users/gus", URL: "https://gts.example/@gus", Username: "gus", Host: "gts.example"},
		"ann@herald.test": {ID: "https://herald.test/users/ann", URL: "https://herald.test/@ann", Username: "ann", Host: "herald.test"},
		"ann@m.example":   {ID: "https://m.example/users/ann", URL: "https://m.example/@ann", Username: "ann", Host: "m.example"},
		// WebFinger delegation: typed as @Zoe@zoe.example, lives on social.zoe.example.
		"zoe@zoe.example": {ID: "https://social.zoe.example/users/zoe", URL: "https://social.zoe.example/@zoe", Username: "zoe", Host: "social.zoe.example"},
		// A hostile server's answers.
		"js@evil.example":  {ID: "javascript:alert(1)", Username: "js", Host: "evil.example"},
		"url@evil.example": {ID: "https://evil.example/users/url", URL: "javascript:alert(1)", Username: "url", Host: "evil.example"},
	}}
}

func options(d *directory) Options {
	return Options{
		LocalDomain: "herald.test",
		Resolve:     d.resolve,
		TagURL:      func(name string) string { return "https://herald.test/tags/" + url.PathEscape(name) },
	}
}

const (
	gusLink = `<span class="h-card" translate="no"><a href="https://gts.example/@gus" class="u-url mention">@<span>gus</span></a></span>`
	annLink = `<span class="h-card" translate="no"><a href="https://herald.test/@ann" class="u-url mention">@<span>ann</span></a></span>`
	gusTag  = `{Mention https://gts.example/users/gus @gus@gts.example}`
)

func TestTextContent(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"empty", " \n\t ", ""},
		{"one line", "hello", "<p>hello</p>"},
		{"trimmed", "\n\n  hello  \n\n", "<p>hello</p>"},
		{"line breaks", "a\nb\r\nc", "<p>a<br />b<br />c</p>"},
		{"paragraphs", "a\n\nb\n\n\n\nc", "<p>a</p><p>b</p><p>c</p>"},
		{"a blank-looking line is not a paragraph break", "a\n \nb", "<p>a<br /> <br />b</p>"},
		{"escaped", `<script>alert("x")</script> & 'q'`, "<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;</p>"},
		{"html entities stay text", "&lt;b&gt;", "<p>&amp;lt;b&amp;gt;</p>"},

		{"remote mention", "hi @gus@gts.example!", "<p>hi " + gusLink + "!</p>"},
		{"mention host case", "hi @gus@GTS.Example", "<p>hi " + gusLink + "</p>"},
		{"local mention", "@ann hello", "<p>" + annLink + " hello</p>"},
		{"local mention with our domain", "@ann@herald.test hello", "<p>" + annLink + " hello</p>"},
		{"unresolved stays as typed", "hi @nobody@x.example", "<p>hi @nobody@x.example</p>"},
		{"e-mail address", "mail gus@gts.example", "<p>mail gus@gts.example</p>"},
		{"after = or /", "a=@gus@gts.example b/@gus@gts.example", "<p>a=@gus@gts.example b/@gus@gts.example</p>"},
		{"accent after the user name", "@gusé", "<p>@gusé</p>"},
		{"sentence full stop is not the host", "to @gus@gts.example.", "<p>to " + gusLink + ".</p>"},
		{"same user name on two servers", "@ann @ann@m.example",
			`<p><span class="h-card" translate="no"><a href="https://herald.test/@ann" class="u-url mention">@<span>ann</span></a></span> ` +
				`<span class="h-card" translate="no"><a href="https://m.example/@ann" class="u-url mention">@<span>ann@m.example</span></a></span></p>`},
		{"canonical name from the resolver", "@Zoe@zoe.example",
			`<p><span class="h-card" translate="no"><a href="https://social.zoe.example/@zoe" class="u-url mention">@<span>zoe</span></a></span></p>`},
		{"resolver's javascript: id is not linked", "@js@evil.example", "<p>@js@evil.example</p>"},
		{"resolver's javascript: profile URL falls back to the id", "@url@evil.example",
			`<p><span class="h-card" translate="no"><a href="https://evil.example/users/url" class="u-url mention">@<span>url</span></a></span></p>`},

		{"hashtag", "#Fediverse rocks", `<p><a href="https://herald.test/tags/fediverse" class="mention hashtag" rel="tag">#<span>Fediverse</span></a> rocks</p>`},
		{"unicode hashtag", "#日本語", `<p><a href="https://herald.test/tags/%E6%97%A5%E6%9C%AC%E8%AA%9E" class="mention hashtag" rel="tag">#<span>日本語</span></a></p>`},
		{"hashtag with a separator", "#a·b", `<p><a href="https://herald.test/tags/a%C2%B7b" class="mention hashtag" rel="tag">#<span>a·b</span></a></p>`},
		{"a trailing separator is not part of it", "#ab· x", `<p><a href="https://herald.test/tags/ab" class="mention hashtag" rel="tag">#<span>ab</span></a>· x</p>`},
		{"digits only is no hashtag", "#123 and issue#4", "<p>#123 and issue#4</p>"},
		{"glued to a word is no hashtag", "C#sharp a/#b (x)#c", "<p>C#sharp a/#b (x)#c</p>"},
		// The URL is not linked either: it is glued to a letter.
		{"hashtag glued to a URL", "#tagshttps://example.com/",
			`<p><a href="https://herald.test/tags/tags" class="mention hashtag" rel="tag">#<span>tags</span></a>https://example.com/</p>`},

		{"url", "see https://example.com/a.",
			`<p>see <a href="https://example.com/a" target="_blank" rel="nofollow noopener" translate="no"><span class="invisible">https://</span><span class="">example.com/a</span><span class="invisible"></span></a>.</p>`},
		{"www is hidden too", "http://www.example.com",
			`<p><a href="http://www.example.com" target="_blank" rel="nofollow noopener" translate="no"><span class="invisible">http://www.</span><span class="">example.com</span><span class="invisible"></span></a></p>`},
		{"long url", "https://example.com/0123456789/0123456789/0123456789",
			`<p><a href="https://example.com/0123456789/0123456789/0123456789" target="_blank" rel="nofollow noopener" translate="no"><span class="invisible">https://</span><span class="ellipsis">example.com/0123456789/0123456</span><span class="invisible">789/0123456789</span></a></p>`},
		{"one character more is shown, not hidden", "https://example.com/0123456789/01234567",
			`<p><a href="https://example.com/0123456789/01234567" target="_blank" rel="nofollow noopener" translate="no"><span class="invisible">https://</span><span class="">example.com/0123456789/01234567</span><span class="invisible"></span></a></p>`},
		{"balanced parentheses", "(https://en.wikipedia.org/wiki/Go_(language))",
			`<p>(<a href="https://en.wikipedia.org/wiki/Go_(language)" target="_blank" rel="nofollow noopener" translate="no"><span class="invisible">https://</span><span class="ellipsis">en.wikipedia.org/wiki/Go_(lang</span><span class="invisible">uage)</span></a>)</p>`},
		{"query", "https://example.com/?q=1&r=2, then",
			`<p><a href="https://example.com/?q=1&amp;r=2" target="_blank" rel="nofollow noopener" translate="no"><span class="invisible">https://</span><span class="">example.com/?q=1&amp;r=2</span><span class="invisible"></span></a>, then</p>`},
		{"quotes end a url", `"https://example.com/x"`,
			`<p>&quot;<a href="https://example.com/x" target="_blank" rel="nofollow noopener" translate="no"><span class="invisible">https://</span><span class="">example.com/x</span><span class="invisible"></span></a>&quot;</p>`},
		{"markup ends a url", `https://example.com/a"><script>`,
			`<p><a href="https://example.com/a" target="_blank" rel="nofollow noopener" translate="no"><span class="invisible">https://</span><span class="">example.com/a</span><span class="invisible"></span></a>&quot;&gt;&lt;script&gt;</p>`},
		{"a quote inside a url is escaped", `https://example.com/a"onclick=x`,
			`<p><a href="https://example.com/a&quot;onclick=x" target="_blank" rel="nofollow noopener" translate="no"><span class="invisible">https://</span><span class="">example.com/a&quot;onclick=x</span><span class="invisible"></span></a></p>`},
		{"mention and hashtag inside a url stay in it", "https://example.com/@gus@gts.example#tag",
			`<p><a href="https://example.com/@gus@gts.example#tag" target="_blank" rel="nofollow noopener" translate="no"><span class="invisible">https://</span><span class="ellipsis">example.com/@gus@gts.example#t</span><span class="invisible">ag</span></a></p>`},
		{"only http and https", "javascript:alert(1) ftp://example.com/ data:text/html,x", "<p>javascript:alert(1) ftp://example.com/ data:text/html,x</p>"},
		{"not glued to a word", "xhttps://example.com", "<p>xhttps://example.com</p>"},
		{"loopback hosts link", "http://127.0.0.1:8080/x",
			`<p><a href="http://127.0.0.1:8080/x" target="_blank" rel="nofollow noopener" translate="no"><span class="invisible">http://</span><span class="">127.0.0.1:8080/x</span><span class="invisible"></span></a></p>`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Text(context.Background(), Draft{Text: tc.text}, options(newDirectory()))
			if err != nil {
				t.Fatal(err)
			}
			if r.Content != tc.want {
				t.Errorf("content\n got %s\nwant %s", r.Content, tc.want)
			}
		})
	}
}

func TestTextTagsAndRecipients(t *testing.T) {
	tests := []struct {
		name, text  string
		tags        []string
		recipients  []string
		hashtags    []string
		unresolved  []string
		lookedUp    []string
		noTagURL    bool
		noResolver  bool
		wantContent string
	}{
		{name: "mention", text: "@gus@gts.example hi",
			tags: []string{gusTag}, recipients: []string{"https://gts.example/users/gus"}, lookedUp: []string{"gus@gts.example"}},
		{name: "one lookup and one tag per handle", text: "@gus@gts.example @GUS@gts.example @gus@gts.example",
			tags: []string{gusTag}, recipients: []string{"https://gts.example/users/gus"}, lookedUp: []string{"gus@gts.example"}},
		{name: "the canonical account names the tag", text: "@Zoe@zoe.example",
			tags:       []string{"{Mention https://social.zoe.example/users/zoe @zoe@social.zoe.example}"},
			recipients: []string{"https://social.zoe.example/users/zoe"}, lookedUp: []string{"Zoe@zoe.example"}},
		{name: "local mention asks for the local domain", text: "@ann",
			tags: []string{"{Mention https://herald.test/users/ann @ann@herald.test}"}, recipients: []string{"https://herald.test/users/ann"}, lookedUp: []string{"ann@herald.test"}},
		{name: "unresolved are reported", text: "@nobody@x.example @js@evil.example @gus@gts.example",
			tags: []string{gusTag}, recipients: []string{"https://gts.example/users/gus"},
			unresolved: []string{"nobody@x.example: webfinger: nobody@x.example: not found", "js@evil.example: " + ErrInvalidMention.Error()},
			lookedUp:   []string{"nobody@x.example", "js@evil.example", "gus@gts.example"}},
		{name: "a port is part of the domain", text: "@gus@gts.example:8443, hi",
			unresolved: []string{"gus@gts.example:8443: webfinger: gus@gts.example:8443: not found"}, lookedUp: []string{"gus@gts.example:8443"}},
		{name: "mentions inside urls are not looked up", text: "https://example.com/@gus@gts.example mail gus@gts.example"},
		{name: "no resolver", text: "@gus@gts.example", noResolver: true,
			unresolved: []string{"gus@gts.example: compose: no resolver"}, wantContent: "<p>@gus@gts.example</p>"},
		{name: "hashtags, normalized and each once", text: "#Café #CAFE #ｃａｆｅ #cafe #Straße",
			tags:     []string{"{Hashtag https://herald.test/tags/cafe #Café}", "{Hashtag https://herald.test/tags/stra%C3%9Fe #Straße}"},
			hashtags: []string{"cafe", "straße"}},
		{name: "mention tags come first", text: "#tag @gus@gts.example",
			tags: []string{gusTag, "{Hashtag https://herald.test/tags/tag #tag}"}, hashtags: []string{"tag"},
			recipients: []string{"https://gts.example/users/gus"}, lookedUp: []string{"gus@gts.example"}},
		{name: "a fragment is not a hashtag", text: "https://example.com/page#Section"},
		{name: "no tag pages, no hashtags", text: "#tag", noTagURL: true, wantContent: "<p>#tag</p>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDirectory()
			o := options(d)
			if tc.noTagURL {
				o.TagURL = nil
			}
			if tc.noResolver {
				o.Resolve = nil
			}
			r, err := Text(context.Background(), Draft{Text: tc.text}, o)
			if err != nil {
				t.Fatal(err)
			}
			var tags, unresolved []string
			for _, tag := range r.Tags {
				tags = append(tags, fmt.Sprint(tag))
			}
			for _, u := range r.Unresolved {
				unresolved = append(unresolved, u.Handle+": "+u.Err.Error())
			}
			check := func(what string, got, want []string) {
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s\n got %q\nwant %q", what, got, want)
				}
			}
			check("tags", tags, tc.tags)
			check("recipients", r.Recipients, tc.recipients)
			check("hashtags", r.Hashtags, tc.hashtags)
			check("unresolved", unresolved, tc.unresolved)
			check("lookups", d.calls, tc.lookedUp)
			if tc.wantContent != "" && r.Content != tc.wantContent {
				t.Errorf("content %s, want %s", r.Content, tc.wantContent)
			}
		})
	}
}

func TestTextMentionLimit(t *testing.T) {
	var text strings.Builder
	d := &directory{accounts: map[string]Mention{}}
	for i := range MaxMentions + 2 {
		h := fmt.Sprintf("u%d@m.example", i)
		d.accounts[h] = Mention{ID: "https://m.example/users/" + h}
		text.WriteString("@" + h + " ")
	}
	r, err := Text(context.Background(), Draft{Text: text.String()}, options(d))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.calls) != MaxMentions || len(r.Recipients) != MaxMentions {
		t.Errorf("%d lookups, %d recipients; want %d", len(d.calls), len(r.Recipients), MaxMentions)
	}
	if len(r.Unresolved) != 2 || !errors.Is(r.Unresolved[0].Err, ErrTooManyMentions) {
		t.Errorf("unresolved %v, want two over the limit", r.Unresolved)
	}
}

func TestTextContextEnded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	o := options(newDirectory())
	o.Resolve = func(ctx context.Context, handle string) (Mention, error) {
		cancel() // the request went away during the first lookup
		return Mention{}, ctx.Err()
	}
	_, err := Text(ctx, Draft{Text: "@gus@gts.example @ann"}, o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

func TestTextDraftFields(t *testing.T) {
	d := Draft{Text: "hi @gus@gts.example #tag", Summary: "  spoilers  ", InReplyTo: "https://gts.example/statuses/1", Language: "PT-BR"}
	r, err := Text(context.Background(), d, options(newDirectory()))
	if err != nil {
		t.Fatal(err)
	}
	note, _ := as.Parse([]byte(`{"type":"Note","tag":[{"type":"Emoji","name":":x:"}],"to":["https://www.w3.org/ns/activitystreams#Public"]}`))
	r.Apply(note)
	want := map[string]any{
		"type":       "Note",
		"to":         []any{"https://www.w3.org/ns/activitystreams#Public"},
		"content":    r.Content,
		"contentMap": map[string]any{"pt-BR": r.Content},
		"summary":    "spoilers",
		"sensitive":  true,
		"inReplyTo":  "https://gts.example/statuses/1",
		"tag": []any{
			map[string]any{"type": "Emoji", "name": ":x:"},
			map[string]any{"type": "Mention", "href": "https://gts.example/users/gus", "name": "@gus@gts.example"},
			map[string]any{"type": "Hashtag", "href": "https://herald.test/tags/tag", "name": "#tag"},
		},
	}
	if got := asMap(t, note); !reflect.DeepEqual(got, want) {
		t.Errorf("note\n got %v\nwant %v", got, want)
	}

	plain := &as.Object{}
	Result{Content: "<p>x</p>"}.Apply(plain)
	if got := asMap(t, plain); !reflect.DeepEqual(got, map[string]any{"content": "<p>x</p>"}) {
		t.Errorf("a plain post sets only content, got %v", got)
	}

	for _, bad := range []string{"english", "e", "en_US", "en-", "<b>"} {
		if _, err := Text(context.Background(), Draft{Text: "x", Language: bad}, Options{}); !errors.Is(err, ErrLanguage) {
			t.Errorf("language %q: err %v, want ErrLanguage", bad, err)
		}
	}
}

func TestNormalizeHashtag(t *testing.T) {
	for in, want := range map[string]string{
		"#Fediverse": "fediverse",
		"Café":       "cafe",
		"ÇÀÖŁØß":     "caoloß", // ß is not in Mastodon's folding table
		"ｍａｓｔｏｄｏｎ":   "mastodon",
		"cafe\u0301": "cafe", // a combining accent composes under NFKC, then folds
		"日本語":        "日本語",
		"a·b":        "a·b",
		"tag_":       "tag_",
	} {
		if got := NormalizeHashtag(in); got != want {
			t.Errorf("NormalizeHashtag(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkText: a 500-character post with a mention, hashtags and a URL.
func BenchmarkText(b *testing.B) {
	text := "Hello @gus@gts.example, see https://example.com/a/long/path?q=1 #Fediverse #日本語\n\n" + strings.Repeat("Some words of a post. ", 19)
	o := options(newDirectory())
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Text(context.Background(), Draft{Text: text}, o); err != nil {
			b.Fatal(err)
		}
	}
}

func TestPrependMentions(t *testing.T) {
	bob := MentionLink("https://b.example/@bob", "bob")
	carol := MentionLink("https://c.example/@carol", "carol")
	for _, tc := range []struct{ content, want string }{
		{"<p>hi</p><p>there</p>", "<p>" + bob + " " + carol + " hi</p><p>there</p>"},
		{"", "<p>" + bob + " " + carol + "</p>"},
		{"<p></p>", "<p>" + bob + " " + carol + "</p>"},
		{"plain <b>text</b>", "<p>" + bob + " " + carol + "</p>plain <b>text</b>"},
	} {
		if got := PrependMentions(tc.content, []string{bob, carol}); got != tc.want {
			t.Errorf("PrependMentions(%q)\n got %s\nwant %s", tc.content, got, tc.want)
		}
	}
	// What Text makes of "@bob hi" is what PrependMentions makes of "hi".
	res, err := Text(context.Background(), Draft{Text: "@bob@b.example hi"}, Options{LocalDomain: "herald.example",
		Resolve: func(context.Context, string) (Mention, error) {
			return Mention{ID: "https://b.example/users/bob", URL: "https://b.example/@bob", Username: "bob", Host: "b.example"}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if got := PrependMentions("<p>hi</p>", []string{bob}); got != res.Content {
		t.Errorf("prepended %s, composed %s", got, res.Content)
	}
	if got := Links(`<p><a href="https://a.example/x">x</a> <span class="h-card"><a class="u-url" href="https://b.example/@bob">@bob</a></span></p>`); len(got) != 2 || got[1] != "https://b.example/@bob" {
		t.Errorf("Links: %q", got)
	}
}

// asMap is a document as its JSON decodes.
func asMap(t *testing.T, o *as.Object) map[string]any {
	t.Helper()
	b, err := as.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
