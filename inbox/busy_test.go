package inbox

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestBusyInboxAsksToComeBack: with every processing slot taken, a request
// waits briefly and is answered 503 with Retry-After; once a slot frees,
// requests are processed again.
func TestBusyInboxAsksToComeBack(t *testing.T) {
	h := &Handler{Metrics: NewMetrics(nil), Slots: NewSlots(1), Now: time.Now}
	h.Slots <- struct{}{} // a request in progress
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/inbox", strings.NewReader("{}")))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("saturated: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	<-h.Slots // it finished
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/inbox", strings.NewReader("{}")))
	if rec.Code != http.StatusUnsupportedMediaType {
		t.Fatalf("with a free slot: %d, want the request processed (415 for no content type)", rec.Code)
	}
	if len(h.Slots) != 0 {
		t.Error("the slot was not given back")
	}
}
