package admin

import (
	"context"
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"

	"herald/outbox/delivery"
	"herald/store"
)

// signatureView is what a host's page shows of the signatures it verifies
// (FEDERATION.md, "The signature rule"): how its deliveries are signed, and the
// evidence Herald has for it.
type signatureView struct {
	SignedWith string
	Row        store.HostSignatures
	Known      bool // Herald has a row for it
	// FromNodeInfo: its NodeInfo names software known to verify RFC 9421
	// (and Ed25519).
	RFC9421FromNodeInfo, Ed25519FromNodeInfo bool
}

func (h *Handler) signaturesOf(ctx context.Context, host string) (signatureView, error) {
	row, err := h.db.HostSignaturesOf(ctx, host)
	if errors.Is(err, store.ErrNotFound) {
		row, err = store.HostSignatures{Host: host}, nil
	} else if err == nil {
		row.Host = host
	}
	v := signatureView{SignedWith: delivery.SignedWith(row), Row: row, Known: !row.UpdatedAt.IsZero()}
	v.RFC9421FromNodeInfo, v.Ed25519FromNodeInfo = delivery.FromNodeInfo(row.Software, row.SoftwareVersion)
	return v, err
}

// resetSignatures forgets what Herald learnt about a host's signatures
// (herald signatures reset): draft-cavage again until it shows evidence
// anew. With resend, what was counted delivered to it in the last week is
// queued again too.
func (h *Handler) resetSignatures(w http.ResponseWriter, r *http.Request) {
	host := chi.URLParam(r, "host")
	if host == "" {
		http.Error(w, "No host.", http.StatusNotFound)
		return
	}
	if _, err := h.cfg.Node.Signatures.Reset(r.Context(), host); err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("admin: reset signature evidence", "host", host)
	if r.PostFormValue("resend") == "" {
		done(w, r, hostURL(host), "signatures-reset")
		return
	}
	n, err := h.db.RequeueDelivered(r.Context(), host)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.cfg.Node.Runner.Wake()
	h.log.Info("admin: requeued delivered deliveries", "host", host, "rows", n)
	done(w, r, hostURL(host), "signatures-resent")
}
