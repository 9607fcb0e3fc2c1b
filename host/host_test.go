package host

import (
	"errors"
	"strings"
	"testing"
)

// TestParse: every spelling of one host is one Name, as Go's client would
// dial it (issue 26 items 1 and 2).
func TestParse(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"example.com", "example.com"},
		{"Example.COM.", "example.com"},
		{"bücher.test", "xn--bcher-kva.test"},
		{"BÜCHER.TEST", "xn--bcher-kva.test"},
		{"XN--BCHER-KVA.test", "xn--bcher-kva.test"},
		{"ｂｌｏｃｋｅｄ.test", "blocked.test"},  // full-width letters
		{"blocked。test", "blocked.test"},  // ideographic full stop
		{"blocked．test．", "blocked.test"}, // full-width full stop, trailing
		{"blocked.test。", "blocked.test"}, // trailing ideographic stop
		{"under_score.example", "under_score.example"},
		{"127.0.0.61", "127.0.0.61"},
		{"::ffff:127.0.0.61", "127.0.0.61"},   // IPv4-mapped
		{"[::ffff:127.0.0.61]", "127.0.0.61"}, // bracketed
		{"[::ffff:7f00:3d]", "127.0.0.61"},    // mapped, in hex
		{"0:0:0:0:0:ffff:7f00:003d", "127.0.0.61"},
		{"[0000::1]", "::1"},
		{"2001:DB8:0:0::1", "2001:db8::1"},
		{"2130706493", "127.0.0.61"},      // one number
		{"0x7f.0.0.0x3d", "127.0.0.61"},   // hex parts
		{"127.61", "127.0.0.61"},          // short form
		{"0177.0.0.075", "127.0.0.61"},    // octal parts
		{"127.000.000.061", "127.0.0.49"}, // leading zero: octal, as browsers read it
	} {
		got, err := Parse(c.in)
		if err != nil || string(got) != c.want {
			t.Errorf("Parse(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{
		"", "example.com:443", "[::1]:80", "fe80::1%eth0", "[fe80::1%25eth0]", "a..b", ".",
		"evil<i>host", "sp ace.example", strings.Repeat("a", 64) + ".example",
		"256.0.0.1", "1.2.3.4.5", "0x1ffffffff", "exa[mple.com",
	} {
		if got, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %q; want an error", in, got)
		}
	}
}

func TestParseOperator(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"  Bad.Example. ", "bad.example", ""},
		{"Bücher.Example", "xn--bcher-kva.example", ""},
		{"ＢＡＤ．example", "bad.example", ""},
		{"[::ffff:127.0.0.61]", "127.0.0.61", ""},
		{"under_score.example", "", "not a valid host name"},
		{"-lead.example", "", "not a valid host name"},
		{"bad.example:8080", "", "without a port"},
		{"https://bad.example/", "", "not a URL"},
		{"user@bad.example", "", "not a URL"},
		{"", "", "empty"},
	} {
		got, err := ParseOperator(c.in)
		if c.err == "" && (err != nil || string(got) != c.want) {
			t.Errorf("ParseOperator(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseOperator(%q) = %q, %v; want an error saying %q", c.in, got, err, c.err)
		}
	}
}

func TestOfURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://Example.COM/x", "example.com"},
		{"https://example.com:443/x", "example.com"},
		{"http://example.com:80/x", "example.com"},
		{"http://example.com:443/x", "example.com:443"},
		{"http://[::ffff:127.0.0.61]:8080/users/a", "127.0.0.61:8080"},
		{"http://[::ffff:7f00:3d]:8080/", "127.0.0.61:8080"},
		{"http://[2001:db8::1]:8080/", "[2001:db8::1]:8080"},
		{"https://[2001:db8::1]/", "[2001:db8::1]"},
		{"https://bücher.test/inbox", "xn--bcher-kva.test"},
		{"https://ｂｌｏｃｋｅｄ.test/", "blocked.test"},
		{"https://blocked%E3%80%82test/", "blocked.test"},
		{"https://user@example.com/", "example.com"},
	} {
		got, err := OfURL(c.in)
		if err != nil || got.String() != c.want {
			t.Errorf("OfURL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "/relative", "mailto:a@example.com", "ftp://example.com/", "https:///x", "https://example.com:0/", "https://example.com:99999/", "https://exa mple.com/"} {
		if got, err := OfURL(in); err == nil {
			t.Errorf("OfURL(%q) = %q; want an error", in, got)
		}
	}
	if !SameAuthority("https://A.example:443/x", "https://a.example/y") || SameAuthority("https://a.example:8443/", "https://a.example/") {
		t.Error("SameAuthority")
	}
}

func TestParseAuthority(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Example.com:8080", "example.com:8080"},
		{"example.com", "example.com"},
		{"[::1]:8080", "[::1]:8080"},
		{"[::1]", "[::1]"},
		{"::1", "[::1]"},
		{"[::ffff:127.0.0.1]:80", "127.0.0.1:80"},
	} {
		got, err := ParseAuthority(c.in)
		if err != nil || got.String() != c.want {
			t.Errorf("ParseAuthority(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"example.com:", "example.com:x", "example.com:080", "[::1]:", "a:b:c"} {
		if got, err := ParseAuthority(in); err == nil && in != "a:b:c" {
			t.Errorf("ParseAuthority(%q) = %q; want an error", in, got)
		}
	}
}

func TestChainAndWithin(t *testing.T) {
	got := Name("a.b.example.com").Chain()
	want := []Name{"a.b.example.com", "b.example.com", "example.com", "com"}
	if len(got) != len(want) {
		t.Fatalf("Chain = %v", got)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("Chain = %v", got)
		}
	}
	if c := Name("10.0.0.2").Chain(); len(c) != 1 {
		t.Errorf("an address's chain is itself: %v", c)
	}
	if !Name("a.example.com").Within("example.com") || Name("badexample.com").Within("example.com") || Name("10.0.0.2").Within("0.0.2") {
		t.Error("Within")
	}
}

func TestRegistrable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a.b.example.co.uk", "example.co.uk"},
		{"x1.wild.test", "wild.test"},
		{"alice.github.io", "alice.github.io"}, // a hosting provider's suffix
		{"github.io", "github.io"},
		{"localhost", "localhost"},
		{"127.0.0.61", "127.0.0.61"},
		{"2001:db8::1", "2001:db8::/64"},
		{"2001:db8::ffff:1", "2001:db8::/64"},
	} {
		if got := Name(c.in).Registrable(); got != c.want {
			t.Errorf("Registrable(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

func TestErrors(t *testing.T) {
	if _, err := OfURL("ftp://x/"); !errors.Is(err, ErrNotHTTP) {
		t.Error(err)
	}
	if _, err := Parse("a b"); !errors.Is(err, ErrNotHost) {
		t.Error(err)
	}
}
