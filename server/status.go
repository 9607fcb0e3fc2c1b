package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"herald/policy"
	"herald/store"
	"herald/web/templates"
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
		"Uptime":  templates.Duration(s.node.Now().Sub(s.started)),
		"Actors":  rows,
		"Panels":  panels,
	})
}

// Who sees the blocklist on the public status page (Config.ShowBlocklist).
const (
	BlocklistNobody   = "nobody"
	BlocklistEveryone = "everyone"
)

// blockedPanel shows how many domains are blocked and, only when the
// operator publishes the list (--show-blocklist everyone, as Mastodon's
// "show domain blocks"), which ones and why: a blocked server must not be
// able to tell that it is blocked unless the operator says so.
func (s *Server) blockedPanel(ctx context.Context) (Panel, error) {
	list, err := s.db.BlockedDomains(ctx)
	if err != nil {
		return Panel{}, err
	}
	p := Panel{Title: "Moderated domains", Columns: []string{"Domain", "Severity", "Since", "Reason"}, Empty: "No domains are blocked or limited."}
	if s.cfg.ShowBlocklist != BlocklistEveryone {
		if len(list) > 0 {
			p.Empty = fmt.Sprintf("%d blocked or limited; this server does not publish the list.", len(list))
		}
		return p, nil
	}
	for _, b := range list {
		domain := b.Domain
		if b.Obfuscate {
			domain = obfuscate(domain)
		}
		p.Rows = append(p.Rows, []string{domain, severityWords(b), b.CreatedAt.Format("2006-01-02"), b.Reason})
	}
	return p, nil
}

// severityWords is an entry's severity as the status page says it.
func severityWords(b store.BlockedDomain) string {
	var w []string
	switch b.Severity {
	case policy.SeveritySilence:
		w = append(w, "limited")
	case policy.SeverityNoop:
	default:
		w = append(w, "suspended")
	}
	if b.RejectMedia && !b.Suspends() {
		w = append(w, "media rejected")
	}
	if b.RejectReports && !b.Suspends() {
		w = append(w, "reports rejected")
	}
	return strings.Join(w, ", ")
}

// obfuscate stars the middle of a domain, keeping its dots, as Mastodon
// shows an obfuscated domain block (app/models/domain_block.rb,
// public_domain): a quarter of its length stays visible at each end.
func obfuscate(domain string) string {
	n := len(domain)
	visible := n / 4
	b := []byte(domain)
	for i := range b {
		if i > visible && i < n-visible && b[i] != '.' {
			b[i] = '*'
		}
	}
	return string(b)
}
