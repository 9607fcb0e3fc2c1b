package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"herald/node"
	"herald/store"
)

// Panel is one section of the status page: a titled table, or a sentence
// when it has no rows. Later parts of Herald (the delivery queue, the
// blocklist) add panels with AddPanel.
type Panel struct {
	Title   string
	Columns []string
	Rows    [][]string
	// Links, when set, has one URL per row (or ""): the row's first cell
	// links there.
	Links []string
	Empty string // shown when Rows is empty
	Note  string // shown below, rows or not
}

// PanelFunc computes a panel for each render of the status page. It must not
// return secrets: the page is public.
type PanelFunc func(ctx context.Context) (Panel, error)

// AddPanel adds a section to the status page. Call it before serving.
func (s *Server) AddPanel(f PanelFunc) { s.panels = append(s.panels, f) }

type statusActor struct {
	URL, Handle, DisplayName, Type, Since string
	Followers, Following                  int
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	inst := s.inst
	actors, err := s.db.ListActors(ctx)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	rows := make([]statusActor, 0, len(actors))
	for _, a := range actors {
		rows = append(rows, statusActor{
			URL:         inst.ProfileURL(a.Name),
			Handle:      "@" + a.Name + "@" + inst.Domain,
			DisplayName: a.DisplayName,
			Type:        a.Type,
			Since:       a.CreatedAt.Format("2006-01-02"),
			Followers:   a.Followers,
			Following:   a.Following,
		})
	}
	panels := make([]Panel, 0, len(s.panels))
	for _, f := range s.panels {
		p, err := f(ctx)
		if err != nil {
			s.internalError(w, r, err)
			return
		}
		panels = append(panels, p)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	s.pages.Render(w, "status.html", map[string]any{
		"Domain":  inst.Domain,
		"Version": s.node.Version,
		"Uptime":  formatUptime(s.node.Now().Sub(s.started)),
		"Actors":  rows,
		"Panels":  panels,
	})
}

// formatUptime renders a duration the way people read it: "3d 4h", "12m 5s".
func formatUptime(d time.Duration) string {
	d = d.Round(time.Second)
	days := int(d / (24 * time.Hour))
	d -= time.Duration(days) * 24 * time.Hour
	h, m, sec := int(d/time.Hour), int(d/time.Minute)%60, int(d/time.Second)%60
	switch {
	case days > 0:
		return fmt.Sprintf("%dd %dh", days, h)
	case h > 0:
		return fmt.Sprintf("%dh %dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm %ds", m, sec)
	default:
		return fmt.Sprintf("%ds", sec)
	}
}

// blockedPanel lists the blocklist. The page is public, like the
// operator's decision to block; no other detail of the blocked servers
// appears.
func (s *Server) blockedPanel(ctx context.Context) (Panel, error) {
	list, err := s.db.BlockedDomains(ctx)
	if err != nil {
		return Panel{}, err
	}
	p := Panel{Title: "Blocked domains", Columns: []string{"Domain", "Since", "Reason"}, Empty: "No domains are blocked."}
	for _, b := range list {
		p.Rows = append(p.Rows, []string{b.Domain, b.CreatedAt.Format("2006-01-02"), b.Reason})
	}
	return p, nil
}

// dropsPanel shows the inbox requests from verified signers answered 202
// but not processed since the server started, newest first, under the
// signer's host. Drops decided before the signer was verified are only
// counted: the host such a request names is anyone's to claim, and
// listing it would let anyone write on this page.
func (s *Server) dropsPanel(ctx context.Context) (Panel, error) {
	p := Panel{Title: "Recent inbox drops", Columns: []string{"When", "Reason", "Host"}, Empty: "Nothing dropped from verified senders since start."}
	for _, d := range s.inbox.Metrics.RecentDrops() {
		p.Rows = append(p.Rows, []string{d.At.UTC().Format("2006-01-02 15:04:05"), d.Reason, d.Host})
	}
	if n := s.inbox.Metrics.UnverifiedDrops(); n > 0 {
		p.Note = fmt.Sprintf("Also %d requests dropped before their signature was checked (blocked domains, Deletes of unknown actors): counted, not listed.", n)
	}
	return p, nil
}

// queuePanel shows the delivery queue by state and how long the oldest due
// row has waited.
func (s *Server) queuePanel(ctx context.Context) (Panel, error) {
	counts, err := s.db.DeliveryCounts(ctx)
	if err != nil {
		return Panel{}, err
	}
	oldest := "nothing queued"
	if t, ok, err := s.db.OldestDue(ctx); err != nil {
		return Panel{}, err
	} else if ok {
		if wait := s.node.Now().Sub(t); wait > 0 {
			oldest = "due since " + t.Format("2006-01-02 15:04:05") + " UTC (" + formatUptime(wait) + " ago)"
		} else {
			oldest = "next due " + t.Format("2006-01-02 15:04:05") + " UTC"
		}
	}
	p := Panel{Title: "Delivery queue", Columns: []string{"Queued", "In flight", "Done (7 days)", "Failed (30 days)", "Oldest queued"},
		Rows: [][]string{{fmt.Sprint(counts["queued"]), fmt.Sprint(counts["leased"]), fmt.Sprint(counts["done"]), fmt.Sprint(counts["failed"]), oldest}}}
	// On PostgreSQL this page may come from a web node while no worker
	// runs: then nothing is sent, and the page says so.
	if s.db.Engine() == store.PostgreSQL {
		n, err := s.db.WorkersAlive(ctx, s.node.Now().Add(-node.StaleAfter))
		if err != nil {
			return Panel{}, err
		}
		if n == 0 {
			p.Note = "No worker is running on this database: posts and jobs are kept, and nothing is sent until a herald serve (or serve --role worker) starts."
		}
	}
	return p, nil
}

// failedPanel lists the latest deliveries Herald gave up on.
func (s *Server) failedPanel(ctx context.Context) (Panel, error) {
	list, err := s.db.FailedDeliveries(ctx, "", 20)
	if err != nil {
		return Panel{}, err
	}
	// Hosts, not inboxes: a personal inbox would say who got what on a
	// public page. `herald deliveries --failed` shows the inboxes.
	p := Panel{Title: "Failed deliveries (latest 20)", Columns: []string{"When", "Host", "Attempts", "Last error"},
		Empty: "No failed deliveries. `herald deliveries retry` requeues failed ones."}
	for _, f := range list {
		p.Rows = append(p.Rows, []string{f.FailedAt.Format("2006-01-02 15:04"), f.Host, fmt.Sprint(f.Attempts), f.LastError})
	}
	return p, nil
}

// circuitPanel lists hosts whose circuit breaker is open.
func (s *Server) circuitPanel(ctx context.Context) (Panel, error) {
	p := Panel{Title: "Open circuits", Columns: []string{"Host", "State", "Until"}, Empty: "All circuits closed."}
	for _, c := range s.node.Runner.OpenCircuits() {
		state := "open"
		if c.Probing {
			state = "half-open (probing)"
		}
		p.Rows = append(p.Rows, []string{c.Host, state, c.OpenUntil.UTC().Format("15:04:05")})
	}
	return p, nil
}

// unavailablePanel lists hosts Herald stopped delivering to.
func (s *Server) unavailablePanel(ctx context.Context) (Panel, error) {
	list, err := s.db.UnavailableHosts(ctx)
	if err != nil {
		return Panel{}, err
	}
	p := Panel{Title: "Unavailable domains", Columns: []string{"Host", "Since", "State", "Last error"}, Empty: "No unavailable domains."}
	for _, h := range list {
		state := "skipped"
		if h.Probation {
			state = "probation (it contacted us)"
		}
		p.Rows = append(p.Rows, []string{h.Host, h.UnavailableSince.Format("2006-01-02"), state, h.LastError})
	}
	return p, nil
}
