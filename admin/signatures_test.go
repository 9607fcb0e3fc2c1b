package admin_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"herald/internal/storetest"
	"herald/store"
)

// TestHostSignatures: a host's page says how its deliveries are signed and
// on what evidence, and its reset action forgets that evidence (and, when
// asked, queues again what was counted delivered to it).
func TestHostSignatures(t *testing.T) {
	c := newConsole(t)
	ctx := context.Background()
	host := c.fine.Host
	b := c.browser(t)
	b.login(t, password)
	_, page := b.do(t, "GET", "/admin/hosts/"+host, nil)
	if !strings.Contains(page, "Deliveries are signed with <strong>draft-cavage, RSA</strong>") || !strings.Contains(page, "a 2xx answer is none") {
		t.Errorf("a host without evidence:\n%s", page)
	}
	if err := c.DB.NoteSignatureEvidence(ctx, host, store.Evidence{RFC9421: store.EvidenceSigned}, c.Clock()); err != nil {
		t.Fatal(err)
	}
	if err := c.DB.NoteSignatureEvidence(ctx, host, store.Evidence{Ed25519: store.EvidenceFEP521a}, c.Clock()); err != nil {
		t.Fatal(err)
	}
	_, page = b.do(t, "GET", "/admin/hosts/"+host, nil)
	if !strings.Contains(page, "Deliveries are signed with <strong>RFC 9421, Ed25519</strong>") || !strings.Contains(page, "fep-521a") {
		t.Errorf("a host with evidence:\n%s", page)
	}
	reset := "/admin/hosts/" + host + "/signatures/reset"
	if res, _ := b.do(t, "POST", reset, url.Values{"csrf": {"forged"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("reset without the CSRF token: %d", res.StatusCode)
	}
	res, _ := b.do(t, "POST", reset, url.Values{"csrf": {csrf(t, page)}, "resend": {"1"}})
	if res.StatusCode != http.StatusSeeOther || !strings.HasSuffix(res.Header.Get("Location"), "done=signatures-resent") {
		t.Fatalf("reset: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if _, err := c.DB.HostSignaturesOf(ctx, host); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after reset: %v", err)
	}
	if n := storetest.Count(t, c.DB.AllDeliveries, func(d store.DeliveryView) bool { return d.Host == host && d.State == store.DeliveryQueued }); n != 1 {
		t.Errorf("delivered rows queued again: %d, want 1", n)
	}
	_, page = b.do(t, "GET", res.Header.Get("Location"), nil)
	if !strings.Contains(page, "being sent again") || !strings.Contains(page, "<strong>draft-cavage, RSA</strong>") {
		t.Errorf("after reset:\n%s", page)
	}
}
