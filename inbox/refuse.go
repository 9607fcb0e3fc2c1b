package inbox

import (
	"net/http"

	"herald/httpapi"
)

// refuse answers a request the inbox will not take for its signature (a
// 401 or 400), counts it, keeps it for the operator's console and logs who
// sent it: the remote address, the keyId it named and the reason, so that
// "bad_signature from one peer" can be traced to the peer. The answer
// itself says no more than msg.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, status int, reason, keyID, msg string) {
	h.Metrics.countVerifyFailure(reason)
	h.Metrics.recordRefusal(Refusal{At: h.Now(), Reason: reason, KeyID: keyID, Remote: r.RemoteAddr, Status: status})
	h.Logger.Info("inbox: refused", "remote", r.RemoteAddr, "key_id", keyID, "reason", reason, "status", status, "path", r.URL.Path)
	httpapi.Error(w, status, msg)
}
