package compose

import (
	"context"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

func TestSanitize(t *testing.T) {
	const rel = ` rel="nofollow noopener" target="_blank"`
	tests := []struct{ name, in, want string }{
		{"plain text", "hello", "hello"},
		{"allowed markup", "<p>a<br>b <b>c</b> <strong>d</strong> <i>e</i> <em>f</em> <u>g</u> <s>h</s> <del>i</del> <code>j</code></p>",
			"<p>a<br/>b <b>c</b> <strong>d</strong> <i>e</i> <em>f</em> <u>g</u> <s>h</s> <del>i</del> <code>j</code></p>"},
		{"lists and quotes", `<blockquote><p>q</p></blockquote><pre>x  y</pre><ol start="3" reversed><li value="5">a</li></ol><ul><li>b</li></ul>`,
			`<blockquote><p>q</p></blockquote><pre>x  y</pre><ol start="3" reversed=""><li value="5">a</li></ol><ul><li>b</li></ul>`},
		{"ruby", "<ruby>漢<rp>(</rp><rt>kan</rt><rp>)</rp></ruby>", "<ruby>漢<rp>(</rp><rt>kan</rt><rp>)</rp></ruby>"},
		{"a link gets rel and target", `<a href="https://example.com/x" title="t" id="i">x</a>`, `<a href="https://example.com/x"` + rel + `>x</a>`},
		{"rel tag is kept, others replaced", `<a href="https://h.example/tags/x" rel="tag noreferrer opener">#x</a>`,
			`<a href="https://h.example/tags/x" rel="tag nofollow noopener" target="_blank">#x</a>`},
		{"mastodon's classes are kept", `<p class="quote-inline x"><span class="h-card evil" translate="no"><a href="https://m.example/@a" class="u-url mention hidden">@<span>a</span></a></span> <span class="invisible">i</span><span class="ellipsis">e</span></p>`,
			`<p class="quote-inline"><span class="h-card" translate="no"><a href="https://m.example/@a" class="u-url mention"` + rel + `>@<span>a</span></a></span> <span class="invisible">i</span><span class="ellipsis">e</span></p>`},
		{"translate only as no", `<span translate="yes" class="">x</span>`, `<span>x</span>`},
		{"headings become strong paragraphs", "<h1>Title</h1><h3>Sub</h3>", "<p><strong>Title</strong></p><p><strong>Sub</strong></p>"},
		{"other elements go, their text stays", `<div>a</div><div>b</div><table><tr><td>c</td></tr></table><font color=red>d</font>`, " a  b cd"},
		{"images go", `x<img src="https://example.com/a.png" alt="alt">y`, "xy"},

		{"script with its content", `a<script>alert(1)</script>b<SCRIPT SRC=//evil.example/x.js></SCRIPT>c`, "abc"},
		{"style with its content", `<style>body{display:none}</style>x<p style="color:red">y</p>`, "x<p>y</p>"},
		{"svg and math with their content", `<svg><script>alert(1)</script><text>s</text></svg><math><mi>x</mi></math>ok`, "ok"},
		{"iframe, object, template, noscript", `<iframe src="https://evil.example"></iframe><object data="x">o</object><template><b>t</b></template><noscript>n</noscript>ok`, "ok"},
		{"event handlers", `<p onclick="alert(1)" onmouseover=alert(2)>x</p><b onload=alert(3)>y</b><a href="https://ok.example" onclick="alert(4)">z</a>`,
			`<p>x</p><b>y</b><a href="https://ok.example"` + rel + `>z</a>`},
		{"comments and doctype", `<!DOCTYPE html><!-- <script>alert(1)</script> -->x<!--[if IE]><script>y</script><![endif]-->`, "x"},
		// Outside <svg> and <math>, CDATA is a comment up to the first ">".
		{"cdata", `<![CDATA[<script>alert(1)</script>]]>x`, "alert(1)]]&gt;x"},

		{"unbalanced tags are closed", "<p><b>bold <i>both</p>after", "<p><b>bold <i>both</i></b></p><b><i>after</i></b>"},
		{"misnested tags are untangled", "<b>1<i>2</b>3</i>", "<b>1<i>2</i></b><i>3</i>"},
		{"stray end tags", "</p></div></b>x</a>", "<p></p>x"},
		{"a block inside a paragraph", "<p>a<blockquote>b</blockquote>c</p>", "<p>a</p><blockquote>b</blockquote>c<p></p>"},
		{"a link inside a link", `<a href="https://a.example">1<a href="https://b.example">2</a></a>`,
			`<a href="https://a.example"` + rel + `>1</a><a href="https://b.example"` + rel + `>2</a>`},
		{"a paragraph a table hid inside a paragraph", "<p>a<table><tr><td><p>b</p></td></tr></table>c</p>", "<p>a</p><p>b</p>c<p></p>"},
		{"unclosed attribute", `<a href="https://example.com/ onclick="alert(1)">x</a>`, `<a href="https://example.com/%20onclick="` + rel + `>x</a>`},
		{"unclosed tag at the end", "x<b", "x"},
		{"text that looks like a tag", "1 < 2 > 0 & <3", "1 &lt; 2 &gt; 0 &amp; &lt;3"},

		{"javascript link", `<a href="javascript:alert(1)">x</a>`, "x"},
		{"mixed-case scheme", `<a href="JaVaScRiPt:alert(1)">x</a>`, "x"},
		{"entity-encoded scheme", `<a href="&#106;&#97;vascript&#58;alert(1)">x</a><a href="&#x6A;avascript:alert(1)">y</a><a href="javascript&colon;alert(1)">z</a>`, "xyz"},
		{"whitespace inside a scheme", "<a href=\"java\tscript:alert(1)\">x</a><a href=\"java&#10;script:alert(1)\">y</a><a href=\" \x01javascript:alert(1)\">z</a>", "xyz"},
		{"leading spaces around a scheme", `<a href="  javascript:alert(1)">x</a>`, "x"},
		{"data uri", `<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>`, "x"},
		{"vbscript, file, ftp, mailto", `<a href="vbscript:x">a</a><a href="file:///etc/passwd">b</a><a href="ftp://e.example/">c</a><a href="mailto:a@e.example">d</a>`, "abcd"},
		{"relative and protocol-relative", `<a href="/local">a</a><a href="//evil.example/x">b</a><a href="#top">c</a>`, "abc"},
		{"http without a host", `<a href="https:evil">a</a><a href="http:///x">b</a>`, "ab"},
		{"a dropped link keeps only its text", `<a href="javascript:x"><b>bold</b><script>s()</script><img src=x onerror=alert(1)>text</a>`, "boldtext"},
		{"a link without href", `<a name="x">anchor</a>`, "anchor"},
		{"spaces around a good href are trimmed", `<a href="  https://example.com/a  ">x</a>`, `<a href="https://example.com/a"` + rel + `>x</a>`},
		{"uppercase http", `<a href="HTTPS://Example.com/A">x</a>`, `<a href="https://Example.com/A"` + rel + `>x</a>`},
		{"quotes in a href stay inside it", `<a href='https://example.com/"><script>alert(1)</script>'>x</a>`,
			`<a href="https://example.com/%22%3E%3Cscript%3Ealert%281%29%3C/script%3E"` + rel + `>x</a>`},
		{"bad numbers", `<ol start="1;alert(1)"><li value="x">a</li></ol>`, "<ol><li>a</li></ol>"},
		{"nested too deep for the parser: only the text stays", strings.Repeat("<b>", 600) + "x<script>alert(1)</script>&amp;y", "x&amp;y"},
		{"deep but parseable", strings.Repeat("<span>", 500) + "x", strings.Repeat("<span>", 500) + "x" + strings.Repeat("</span>", 500)},
		{"the first of repeated attributes counts", `<a href="https://ok.example" href="javascript:alert(1)">x</a>`, `<a href="https://ok.example"` + rel + `>x</a>`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Sanitize(tc.in)
			if got != tc.want {
				t.Errorf("Sanitize(%q)\n got %s\nwant %s", tc.in, got, tc.want)
			}
			checkAllowed(t, got)
			if again := Sanitize(got); again != got {
				t.Errorf("not a fixed point:\n once %s\ntwice %s", got, again)
			}
		})
	}
}

// TestSanitizeKeepsComposedContent shows that what Text makes is inside the
// subset: sanitizing it only adds rel and target to the mention links.
func TestSanitizeKeepsComposedContent(t *testing.T) {
	r, err := Text(context.Background(), Draft{Text: "hi @gus@gts.example #Tag https://example.com/x\nline"}, options(newDirectory()))
	if err != nil {
		t.Fatal(err)
	}
	got := Sanitize(r.Content)
	want := `<p>hi <span class="h-card" translate="no"><a href="https://gts.example/@gus" class="u-url mention" rel="nofollow noopener" target="_blank">@<span>gus</span></a></span> ` +
		`<a href="https://herald.test/tags/tag" class="mention hashtag" rel="tag nofollow noopener" target="_blank">#<span>Tag</span></a> ` +
		`<a href="https://example.com/x" translate="no" rel="nofollow noopener" target="_blank"><span class="invisible">https://</span><span>example.com/x</span><span class="invisible"></span></a><br/>line</p>`
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

// checkAllowed fails the test if html holds anything outside the subset.
func checkAllowed(t *testing.T, s string) {
	t.Helper()
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			allowed, ok := allowedAttrs[n.DataAtom]
			if !ok || n.Namespace != "" {
				t.Errorf("element <%s> in %s", n.Data, s)
			}
			for _, a := range n.Attr {
				if !attrAllowed(n.DataAtom, a, allowed) {
					t.Errorf("attribute %s=%q on <%s> in %s", a.Key, a.Val, n.Data, s)
				}
			}
		}
		if n.Type == html.CommentNode || n.Type == html.DoctypeNode {
			t.Errorf("comment or doctype in %s", s)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for c := parsed(t, s).FirstChild; c != nil; c = c.NextSibling {
		walk(c)
	}
	if lower := strings.ToLower(s); strings.Contains(lower, "<script") || strings.Contains(lower, "javascript:") && strings.Contains(lower, "href=\"javascript") {
		t.Errorf("script in %s", s)
	}
}

func attrAllowed(el atom.Atom, a html.Attribute, allowed []string) bool {
	if a.Namespace != "" {
		return false
	}
	switch {
	case el == atom.A && a.Key == "target":
		return a.Val == "_blank"
	case el == atom.A && a.Key == "rel":
		return a.Val == "nofollow noopener" || a.Val == "tag nofollow noopener"
	case a.Key == "href":
		return strings.HasPrefix(a.Val, "https://") || strings.HasPrefix(a.Val, "http://")
	case a.Key == "translate":
		return a.Val == "no"
	case a.Key == "class":
		for _, c := range strings.Fields(a.Val) {
			if !allowedClass.MatchString(c) {
				return false
			}
		}
	}
	for _, k := range allowed {
		if k == a.Key {
			return true
		}
	}
	return false
}

// parsed is what a reader's parser makes of s.
func parsed(t *testing.T, s string) *html.Node {
	t.Helper()
	root, ok := parse(s)
	if !ok {
		t.Fatalf("does not parse: %.200q", s)
	}
	return root
}

// BenchmarkSanitize: a long post of typical app HTML (docs/PERFORMANCE.md).
func BenchmarkSanitize(b *testing.B) {
	in := strings.Repeat(`<p>Some <b>bold</b> text with <a href="https://example.com/page?x=1" class="mention">a link</a> and <span class="h-card">@<span>ann</span></span>.<br>Next line <script>x()</script></p>`, 20)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		Sanitize(in)
	}
}
