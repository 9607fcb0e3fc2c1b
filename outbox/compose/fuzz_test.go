package compose

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

var hostileSeeds = []string{
	`<script>alert(1)</script>`,
	`<p onclick="alert(1)">x</p>`,
	`<a href="javascript:alert(1)">x</a>`,
	`<a href="JaVaScRiPt:alert(1)">x</a>`,
	`<a href="&#106;avascript:alert(1)">x</a>`,
	"<a href=\"java\tscript:alert(1)\">x</a>",
	`<a href="data:text/html,<script>alert(1)</script>">x</a>`,
	`<b><i>x</b></i><p>a<blockquote>b</p>`,
	`<p>a<table><tr><td><p>b<a href="https://a.example">c<table><td><a href="https://b.example">d`,
	`<ruby><rt>a<table><td><rt>b</ruby>`,
	`<li><table><td><li>x`,
	`<svg><p>in svg</p></svg><math><mi>x</mi></math>`,
	`<pre>` + "\n\nx" + `</pre>`,
	`<h1 class="mention">t</h1><div><p>x</div>`,
	`<span class="h-card invisible" translate="no"><a href="https://m.example/@a" class="u-url mention" rel="tag me">@a</a></span>`,
	`<ol start="-3" reversed><li value="2">x</ol>`,
	`<![CDATA[x]]><!-- c --><!DOCTYPE html><template><b>t</b></template>`,
	`<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>`,
	`<textarea><script>alert(1)</script></textarea><title><b>t</b></title>`,
	`<a href="https://example.com/"><a href="https://example.org/">nested</a></a>`,
}

// FuzzSanitize: whatever comes in, what comes out holds only the allowed
// subset and sanitizes to itself.
func FuzzSanitize(f *testing.F) {
	for _, s := range hostileSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Sanitize(in)
		if again := Sanitize(out); again != out {
			t.Fatalf("not a fixed point for %q:\n once %q\ntwice %q", in, out, again)
		}
		checkAllowed(t, out)
	})
}

// FuzzText: the content of any text shows exactly that text (less its
// newlines, which became <p> and <br />): nothing typed turns into markup.
// Mentions are not resolved, so they show as typed.
func FuzzText(f *testing.F) {
	for _, s := range []string{
		"hello @gus@gts.example #tag https://example.com/a(b)c?d=e#f",
		"a\n\nb\r\nc\rd",
		`<script>alert("x")</script> & 'q' &amp;`,
		"#日本語 #a·b #123 https://example.com/#not_a_tag @a@b.c@d",
		"http://x.example/\"><img src=x onerror=alert(1)>",
	} {
		f.Add(s)
	}
	o := Options{LocalDomain: "herald.test", TagURL: func(n string) string { return "https://herald.test/tags/" + url.PathEscape(n) }}
	f.Fuzz(func(t *testing.T, in string) {
		if !utf8.ValidString(in) || strings.ContainsRune(in, 0) {
			t.Skip("the HTML parser replaces these, so the texts would differ for that reason alone")
		}
		r, err := Text(context.Background(), Draft{Text: in}, o)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Trim(in, " \t\n\v\f\r")
		want = strings.NewReplacer("\r\n", "", "\r", "", "\n", "").Replace(want)
		if got := textOf(parsed(t, r.Content)); got != want {
			t.Fatalf("text %q shows as %q in %s", in, got, r.Content)
		}
		checkComposed(t, r.Content)
	})
}

// checkComposed is checkAllowed for Text's own output, which has Mastodon's
// local form: no rel and target added to mention and hashtag links, and
// class="" on a URL's shown part.
func checkComposed(t *testing.T, content string) {
	t.Helper()
	if strings.Contains(content, "<script") {
		t.Fatalf("script in %s", content)
	}
	s := Sanitize(content)
	if Sanitize(s) != s {
		t.Fatalf("composed content does not sanitize to a fixed point: %s", content)
	}
	if textOf(parsed(t, s)) != textOf(parsed(t, content)) {
		t.Fatalf("sanitizing composed content changed its text: %s", content)
	}
}
