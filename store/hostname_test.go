package store

import (
	"strings"
	"testing"
)

func TestParseHost(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"bad.example", "bad.example", ""},
		{"  Bad.Example. ", "bad.example", ""},
		{"Bücher.Example", "xn--bcher-kva.example", ""},
		{"xn--bcher-kva.example", "xn--bcher-kva.example", ""},
		{"ＢＡＤ．example", "bad.example", ""}, // full-width forms fold, as IDNA lookup does
		{"127.0.1.3", "127.0.1.3", ""},
		{"[::1]", "::1", ""},
		{"evil<i>host", "", "not a valid host name"},
		{"under_score.example", "", "not a valid host name"},
		{"-lead.example", "", "not a valid host name"},
		{"a..example", "", "not a valid host name"},
		{strings.Repeat("a", 64) + ".example", "", "not a valid host name"},
		{"bad.example:8080", "", "without a port"},
		{"https://bad.example/", "", "not a URL"},
		{"user@bad.example", "", "not a URL"},
		{"", "", "empty"},
	} {
		got, err := ParseHost(c.in)
		if c.err == "" && (err != nil || got != c.want) {
			t.Errorf("ParseHost(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseHost(%q) = %q, %v; want an error saying %q", c.in, got, err, c.err)
		}
	}
}
