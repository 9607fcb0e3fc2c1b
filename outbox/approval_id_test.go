package outbox

import (
	"testing"

	"herald/federation"
)

// TestApprovalID: only the canonical form of an approval URL names a
// request; "+5", "05" or " 5" name none, so one approval has one id and an
// approvedBy cannot be spelled several ways.
func TestApprovalID(t *testing.T) {
	p := &Publisher{Instance: federation.Instance{Scheme: "https", Domain: "h.example"}}
	base := "https://h.example/users/alice/approvals/"
	for _, c := range []struct {
		iri  string
		id   int64
		want bool
	}{
		{base + "5", 5, true},
		{base + "1234567", 1234567, true},
		{base + "+5", 0, false},
		{base + "05", 0, false},
		{base + "0", 0, false},
		{base + "-5", 0, false},
		{base + " 5", 0, false},
		{base + "5/", 0, false},
		{base, 0, false},
		{base + "99999999999999999999", 0, false},
		{"https://h.example/users/bob/approvals/5", 0, false},
	} {
		id, ok := p.ApprovalID("alice", c.iri)
		if ok != c.want || (ok && id != c.id) {
			t.Errorf("%q: %d, %v; want %d, %v", c.iri, id, ok, c.id, c.want)
		}
	}
}
