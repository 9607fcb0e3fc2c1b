package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"herald/store"
)

// TestCLISignatures drives herald signatures and signatures reset as the
// docs tell an operator to: the list shows how each host is signed for and
// why, one host shows alone (or that it showed nothing), and reset forgets
// one host or all.
func TestCLISignatures(t *testing.T) {
	path := newInstance(t, "herald.example")
	if out := mustCLI(t, "signatures", "--db", path); !strings.Contains(out, "every delivery is signed with draft-cavage") {
		t.Errorf("empty list: %q", out)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, err := range []error{
		db.NoteSignatureEvidence(ctx, "fedify.example", store.Evidence{RFC9421: store.EvidenceSigned}, at),
		db.NoteSignatureEvidence(ctx, "fedify.example", store.Evidence{Ed25519: store.EvidenceFEP521a}, at),
		db.NoteSignatureRefusal(ctx, "gts.example:8443", store.SigRFC9421, at),
		db.NoteNodeInfo(ctx, "mastodon.example", "mastodon", "4.5.2", at),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	out := mustCLI(t, "signatures", "--db", path)
	for _, want := range []string{
		"fedify.example    RFC 9421, Ed25519  signed 2026-03-01",
		"fep-521a 2026-03-01",
		"gts.example:8443  draft-cavage, RSA  -, refused 2026-03-01",
		"mastodon.example  RFC 9421, RSA      nodeinfo",
		"mastodon 4.5.2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("signatures: no %q in\n%s", want, out)
		}
	}
	if out := mustCLI(t, "signatures", "unknown.example", "--db", path); !strings.Contains(out, "unknown.example has shown no evidence: its deliveries are signed with draft-cavage, RSA") {
		t.Errorf("an unknown host: %q", out)
	}
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"signatures", "https://fedify.example/inbox", "--db", path}, 2, "invalid host"},
		{[]string{"signatures", "NOT-A-HOST", "--db", path}, 2, `invalid host "NOT-A-HOST"`},
		{[]string{"signatures", "not_a.host", "--db", path}, 2, "invalid host"},
		{[]string{"signatures", "reset", "NOT-A-HOST", "--db", path}, 2, "invalid host"},
		{[]string{"signatures", "localhost:8080", "--db", path}, 0, "localhost:8080 has shown no evidence"},
		{[]string{"signatures", "127.0.0.1:8080", "--db", path}, 0, "127.0.0.1:8080 has shown no evidence"},
		{[]string{"signatures", "Bücher.Example", "--db", path}, 0, "xn--bcher-kva.example has shown no evidence"},
		{[]string{"signatures", "reset", "--db", path}, 2, "usage: herald signatures reset"},
		{[]string{"signatures", "reset", "--all", "--resend", "--db", path}, 2, "usage: herald signatures reset"},
		{[]string{"signatures", "reset", "fedify.example", "--resend", "--db", path}, 0, "queued again 0 deliveries"},
		{[]string{"signatures", "reset", "fedify.example", "--db", path}, 0, "had learnt nothing about fedify.example"},
		{[]string{"signatures", "reset", "--all", "--db", path}, 0, "about 2 hosts"},
	} {
		code, out, errOut := runCLI(t, nil, c.args...)
		if code != c.code || !strings.Contains(out+errOut, c.out) {
			t.Errorf("%v: exit %d, %q %q", c.args, code, out, errOut)
		}
	}
	if out := mustCLI(t, "signatures", "--db", path); !strings.Contains(out, "every delivery is signed with draft-cavage") {
		t.Errorf("after reset --all: %q", out)
	}
}
