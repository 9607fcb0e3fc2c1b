package compose

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The allowlist is Sanitize::Config::MASTODON_STRICT (app/lib/sanitize_config.rb),
// what Mastodon keeps of a post from another server, with two differences
// that make it stricter: links must be absolute http or https URLs (Mastodon
// also keeps dat:, gemini:, magnet:, xmpp: and a few more), and the numbers
// of <ol start> and <li value> must be integers. <math> is dropped with its
// content (Mastodon shows its TeX annotation instead).
var allowedAttrs = map[atom.Atom][]string{
	atom.P: {"class"}, atom.Br: nil, atom.Span: {"class", "translate"},
	atom.A:   {"href", "rel", "class", "translate"},
	atom.Del: nil, atom.S: nil, atom.Pre: nil, atom.Blockquote: nil, atom.Code: nil,
	atom.B: nil, atom.Strong: nil, atom.U: nil, atom.I: nil, atom.Em: nil,
	atom.Ul: nil, atom.Ol: {"start", "reversed"}, atom.Li: {"value"},
	atom.Ruby: nil, atom.Rt: nil, atom.Rp: nil,
}

// droppedWithContent are removed with everything inside them, as the
// Sanitize gem's remove_contents does: what is in them is code, styling or a
// fallback, never text meant to be read in a post.
var droppedWithContent = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Template: true, atom.Iframe: true,
	atom.Frame: true, atom.Frameset: true, atom.Noembed: true, atom.Noframes: true,
	atom.Noscript: true, atom.Plaintext: true, atom.Xmp: true, atom.Object: true,
	atom.Embed: true, atom.Applet: true, atom.Svg: true, atom.Math: true,
	atom.Head: true, atom.Title: true, atom.Select: true,
}

// spacedWhenRemoved are the Sanitize gem's whitespace_elements that are not
// allowed: removing them leaves a space on each side so that
// "<div>a</div><div>b</div>" reads "a b", not "ab".
var spacedWhenRemoved = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Aside: true, atom.Dd: true,
	atom.Div: true, atom.Dl: true, atom.Dt: true, atom.Footer: true,
	atom.Header: true, atom.Hgroup: true, atom.Hr: true, atom.Nav: true,
	atom.Section: true,
}

var headings = map[atom.Atom]bool{
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
}

// allowedClass is ALLOWED_CLASS_TRANSFORMER: microformats prefixes, and the
// classes Mastodon's own formatting uses. Mastodon keeps any characters after
// a microformats prefix; here they are letters, digits, "-" and "_", so no
// odd byte rides along in a class.
var allowedClass = regexp.MustCompile(`^(?:(?:h|p|u|dt|e)-[A-Za-z0-9_-]+|mention|hashtag|ellipsis|invisible|quote-inline)$`)

// maxPasses bounds Sanitize's search for a fixed point; see Sanitize.
const maxPasses = 4

// Sanitize returns the part of an HTML fragment that Mastodon accepts from
// other servers: the elements p, br, span, a, del, s, pre, blockquote, code,
// b, strong, u, i, em, ul, ol, li, ruby, rt and rp; on a only href (http or
// https), rel, class and translate="no", with rel="nofollow noopener" and
// target="_blank" added; on span class and translate="no"; on p class; the
// classes Mastodon's formatting uses. Headings become <p><strong>. Other
// elements are removed and their text kept, except script, style and the
// like, which go with their content. A link to anything but http(s) becomes
// its text.
//
// The input is parsed as browsers parse it (golang.org/x/net/html, the
// HTML5 algorithm), so unbalanced and misnested markup comes out balanced
// and entity-encoded tricks are decoded before they are checked. Markup
// nested deeper than that parser accepts (512 open elements) is no post:
// only its text is kept, escaped. The output is a fixed point:
// Sanitize(Sanitize(s)) == Sanitize(s).
func Sanitize(s string) string {
	out, ok := sanitizeOnce(s)
	if !ok {
		return textOnly(s)
	}
	// Removing an element can leave markup that parses differently the second
	// time (a <p> that a removed <table> held inside another <p>); clean again
	// until nothing changes, so what is stored is what every reader parses.
	for range maxPasses {
		next, ok := sanitizeOnce(out)
		if !ok {
			break
		}
		if next == out {
			return out
		}
		out = next
	}
	// Not reached by any input found so far but markup made deeper by
	// turning headings into <p><strong>: give up the markup, keep the text.
	return textOnly(out)
}

// sanitizeOnce cleans s in one pass; false if s does not parse.
func sanitizeOnce(s string) (string, bool) {
	root, ok := parse(s)
	if !ok {
		return "", false
	}
	clean := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	for c := root.FirstChild; c != nil; c = c.NextSibling {
		cleanInto(clean, c)
	}
	var b strings.Builder
	for c := clean.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(render(c))
	}
	return b.String(), true
}

// parse reads s as the content of a <div> in a document's body. The result's
// children are the fragment's nodes. It fails only for markup nested too
// deep.
func parse(s string) (*html.Node, bool) {
	root := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	nodes, err := html.ParseFragment(strings.NewReader(s), root)
	if err != nil {
		return root, false
	}
	for _, n := range nodes {
		root.AppendChild(n)
	}
	return root, true
}

// textOnly is the text of s, escaped, found by the tokenizer, which has no
// depth limit; what is in elements dropped with their content is left out.
func textOnly(s string) string {
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	dropped := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return render(&html.Node{Type: html.TextNode, Data: b.String()})
		case html.TextToken:
			if dropped == 0 {
				b.WriteString(strings.ReplaceAll(string(z.Text()), "\x00", ""))
			}
		case html.StartTagToken:
			if name, _ := z.TagName(); droppedWithContent[atom.Lookup(name)] {
				dropped++
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); droppedWithContent[atom.Lookup(name)] && dropped > 0 {
				dropped--
			}
		}
	}
}

func render(n *html.Node) string {
	var b strings.Builder
	_ = html.Render(&b, n) // writing to a strings.Builder does not fail
	return b.String()
}

// cleanInto appends to dst the allowed part of n.
func cleanInto(dst, n *html.Node) {
	switch n.Type {
	case html.TextNode:
		dst.AppendChild(&html.Node{Type: html.TextNode, Data: n.Data})
		return
	case html.ElementNode:
	default: // comments, doctypes
		return
	}
	if n.Namespace != "" || droppedWithContent[n.DataAtom] {
		return // <svg>, <math> and what is inside them
	}
	if headings[n.DataAtom] { // UNSUPPORTED_ELEMENTS_TRANSFORMER
		p := element(atom.P)
		strong := element(atom.Strong)
		p.AppendChild(strong)
		cleanChildren(strong, n)
		dst.AppendChild(p)
		return
	}
	allowed, ok := allowedAttrs[n.DataAtom]
	if !ok {
		if spacedWhenRemoved[n.DataAtom] {
			dst.AppendChild(&html.Node{Type: html.TextNode, Data: " "})
			defer dst.AppendChild(&html.Node{Type: html.TextNode, Data: " "})
		}
		cleanChildren(dst, n)
		return
	}
	e := element(n.DataAtom)
	for _, name := range allowed {
		v, present := attr(n, name)
		if !present {
			continue
		}
		if v, keep := cleanAttr(n.DataAtom, name, v); keep {
			e.Attr = append(e.Attr, html.Attribute{Key: name, Val: v})
		}
	}
	if n.DataAtom == atom.A {
		if _, ok := attr(e, "href"); !ok { // UNSUPPORTED_HREF_TRANSFORMER
			dst.AppendChild(&html.Node{Type: html.TextNode, Data: textOf(n)})
			return
		}
		// add_attributes: Mastodon overwrites rel; "tag" is kept here
		// because software that does not read the "tag" array finds
		// hashtags by it.
		rel := "nofollow noopener"
		kept := e.Attr[:0]
		for _, a := range e.Attr {
			if a.Key == "rel" {
				rel = a.Val + " " + rel
				continue
			}
			kept = append(kept, a)
		}
		e.Attr = append(kept, html.Attribute{Key: "rel", Val: rel}, html.Attribute{Key: "target", Val: "_blank"})
	}
	cleanChildren(e, n)
	dst.AppendChild(e)
}

func cleanChildren(dst, n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		cleanInto(dst, c)
	}
}

// cleanAttr returns the value to keep of an allowed attribute, if any.
func cleanAttr(el atom.Atom, name, v string) (string, bool) {
	switch name {
	case "href":
		return safeHref(v)
	case "class":
		var keep []string
		for _, c := range strings.FieldsFunc(v, isHTMLSpace) {
			if allowedClass.MatchString(c) {
				keep = append(keep, c)
			}
		}
		return strings.Join(keep, " "), len(keep) > 0
	case "rel":
		for _, r := range strings.FieldsFunc(v, isHTMLSpace) {
			if strings.EqualFold(r, "tag") {
				return "tag", true
			}
		}
		return "", false
	case "translate": // TRANSLATE_TRANSFORMER
		return "no", v == "no"
	case "start", "value":
		n, err := strconv.Atoi(strings.TrimSpace(v))
		return strconv.Itoa(n), err == nil
	case "reversed":
		return "", true
	}
	return "", false
}

// safeHref accepts only an absolute http or https URL. The parser has
// already decoded character references, so "&#106;avascript:" is seen as
// "javascript:"; a URL with a control character (which browsers would strip,
// turning "java\tscript:" into a scheme) does not parse at all.
func safeHref(v string) (string, bool) {
	u, err := url.Parse(strings.TrimFunc(v, isHTMLSpace))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	return u.String(), true
}

func isHTMLSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r'
}

func element(a atom.Atom) *html.Node {
	return &html.Node{Type: html.ElementNode, Data: a.String(), DataAtom: a}
}

// attr returns the first value of an attribute: browsers ignore repeats.
func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// textOf is the text a reader sees in n: its text nodes, without what is
// dropped with its content.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			return
		}
		if n.Type == html.ElementNode && (n.Namespace != "" || droppedWithContent[n.DataAtom]) {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}
