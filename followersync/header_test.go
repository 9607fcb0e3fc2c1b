package followersync

import (
	"strings"
	"testing"

	"herald/store"
)

func TestDigestKnownAnswers(t *testing.T) {
	if got := store.DigestOf("https://mastodon.social/users/Gargron").String(); got != "b08ab6951c7d6cc2b91e17ebd9557da7fae02489728e9332fcb3a97748244d50" {
		t.Errorf("digest of Gargron = %s", got)
	}
	if got := store.DigestOf().String(); got != strings.Repeat("0", 64) {
		t.Errorf("empty digest = %s", got)
	}
	// XOR: order does not matter, and adding then removing is a no-op.
	a, b := "https://a.example/users/1", "https://a.example/users/2"
	if store.DigestOf(a, b) != store.DigestOf(b, a) {
		t.Error("digest depends on order")
	}
	d := store.DigestOf(a, b)
	d.Toggle(b)
	if d != store.DigestOf(a) {
		t.Error("Toggle does not remove")
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	h := Header{
		CollectionID: "https://h.example/users/alice/followers",
		URL:          "https://h.example/users/alice/followers_synchronization",
		Digest:       store.DigestOf("https://mastodon.social/users/Gargron").String(),
	}
	want := `collectionId="https://h.example/users/alice/followers", url="https://h.example/users/alice/followers_synchronization", digest="b08ab6951c7d6cc2b91e17ebd9557da7fae02489728e9332fcb3a97748244d50"`
	if h.String() != want {
		t.Fatalf("header\n got %s\nwant %s", h, want)
	}
	got, err := ParseHeader(h.String())
	if err != nil || got != h {
		t.Fatalf("parse: %+v %v", got, err)
	}
	// Mastodon's order and spacing, unknown parameters, upper-case hex.
	got, err = ParseHeader(`collectionId = "https://m.example/users/a/followers",digest="` + strings.ToUpper(h.Digest) + `", url="https://m.example/users/a/followers_synchronization", extra=1`)
	if err != nil || got.Digest != h.Digest || got.URL != "https://m.example/users/a/followers_synchronization" {
		t.Fatalf("parse Mastodon form: %+v %v", got, err)
	}
	// Escapes survive.
	q := Header{CollectionID: `https://h.example/"x"\y`, URL: "https://h.example/s", Digest: h.Digest}
	if got, err := ParseHeader(q.String()); err != nil || got != q {
		t.Fatalf("escaped: %+v %v", got, err)
	}
}

func TestParseHeaderRefusesMalformed(t *testing.T) {
	d := strings.Repeat("ab", 32)
	for _, v := range []string{
		``,
		`collectionId="c", url="u"`, // no digest
		`collectionId="c", url="u", digest="abc"`,                              // short digest
		`collectionId="c", url="u", digest="` + strings.Repeat("zz", 32) + `"`, // not hex
		`collectionId="c", url="u", digest="` + d + `", url="v"`,               // repeated
		`collectionId="c" url="u" digest="` + d + `"`,                          // no commas
		`collectionId="c, url="u", digest="` + d,                               // unterminated
		`collectionId, url="u", digest="` + d + `"`,                            // no value
	} {
		if h, err := ParseHeader(v); err == nil {
			t.Errorf("%q parsed: %+v", v, h)
		}
	}
}

func TestOriginMatching(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"https://example.com/users/a", "https://example.com/users/a/followers_synchronization", true},
		{"https://Example.COM/users/a", "https://example.com/x", true},
		{"https://example.com/users/a", "https://example.com.evil/x", false},
		{"https://example.com.evil/users/a", "https://example.com/x", false},
		{"https://example.com/users/a", "https://sub.example.com/x", false},
		{"https://example.com/users/a", "http://example.com/x", false},
		{"https://example.com/users/a", "https://example.com:8443/x", false},
		{"https://example.com:8443/users/a", "https://example.com:8443/x", true},
		{"https://example.com/users/a", "https://example.com@evil.example/x", false},
		{"https://example.com/users/a", "/relative", false},
		{"https://example.com/users/a", "ftp://example.com/x", false},
	} {
		if got := sameOrigin(c.a, c.b); got != c.same {
			t.Errorf("sameOrigin(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
