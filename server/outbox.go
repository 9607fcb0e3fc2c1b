package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"herald/appapi"
	"herald/federation"
	"herald/outbox"
	"herald/store"
	"herald/web/templates"
)

// newOutbox builds the outbox handler: the C2S endpoint and the documents
// of what was published.
func (s *Server) newOutbox() *outbox.Handler {
	return &outbox.Handler{
		Publisher:       s.Publisher(),
		DB:              s.db,
		Instance:        s.inst,
		Logger:          s.log,
		HTML:            s.objectPage,
		HideSocialGraph: s.cfg.HideSocialGraph,
	}
}

// appAPI builds the app API's handler (/api/v1).
func (s *Server) appAPI() *appapi.Handler {
	return &appapi.Handler{DB: s.db, Publisher: s.Publisher(), Instance: s.inst, Logger: s.log}
}

// Publisher is the node's publisher: the one way out for every activity.
func (s *Server) Publisher() *outbox.Publisher { return s.node.Publisher }

// objectPage renders a published object for browsers.
func (s *Server) objectPage(w http.ResponseWriter, o *store.Object, doc map[string]any) {
	inst := s.inst
	name, _ := inst.LocalName(federation.IDOf(doc["attributedTo"]))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Vary", "Accept")
	s.pages.Render(w, "object.html", map[string]any{
		"Domain":      inst.Domain,
		"Type":        o.Type,
		"Handle":      "@" + name + "@" + inst.Domain,
		"ActorURL":    inst.ProfileURL(name),
		"Published":   federation.FirstString(doc["published"]),
		"Name":        federation.FirstString(doc["name"]),
		"Summary":     strings.Join(templates.PlainParagraphs(federation.FirstString(doc["summary"])), " "),
		"Paragraphs":  templates.PlainParagraphs(federation.FirstString(doc["content"])),
		"Attachments": templates.Attachments(doc),
		"ID":          o.IRI,
	})
}

// failedHost is a server a public activity could not reach, as the public
// report names it: the host and how many of its deliveries failed, never an
// inbox (a personal inbox says who follows whom).
type failedHost struct {
	Host   string
	Failed int
}

// reportPage serves /status/deliveries?activity=IRI: where one public
// activity got to, linked from the status page. It gives the summary and the
// hosts of failed deliveries only; the operator's console
// (/admin/posts?activity=IRI) and `herald deliveries URL` have every inbox.
func (s *Server) reportPage(w http.ResponseWriter, r *http.Request) {
	iri := r.URL.Query().Get("activity")
	a, err := s.db.ActivityByIRI(r.Context(), iri)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (!a.InOutbox || !a.Public)) {
		s.writeError(w, r, http.StatusNotFound, "No such published activity.")
		return
	}
	var rows []store.DeliveryView
	if err == nil {
		rows, err = s.db.ActivityDeliveries(r.Context(), a.ID)
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	rep := outbox.NewReport(a.IRI, rows)
	var failed []failedHost
	index := map[string]int{}
	for i, t := range rep.Targets {
		if t.State != "failed" {
			continue
		}
		host := rows[i].Host
		if _, ok := index[host]; !ok {
			index[host] = len(failed)
			failed = append(failed, failedHost{Host: host})
		}
		failed[index[host]].Failed++
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	s.pages.Render(w, "report.html", map[string]any{"Domain": s.inst.Domain, "Activity": a.IRI, "Summary": rep.Summary, "Failed": failed})
}

// postsPanel lists the latest public activities with where they got to;
// each links to its full delivery report. Non-public activities stay off
// the public page: their recipients are nobody else's business (their
// reports are in the token API and `herald deliveries URL`).
func (s *Server) postsPanel(ctx context.Context) (Panel, error) {
	list, err := s.db.RecentPublic(ctx, 10)
	if err != nil {
		return Panel{}, err
	}
	p := Panel{Title: "Recent activities", Columns: []string{"Activity", "Type", "Published", "Where it went"}, Empty: "Nothing published yet."}
	for _, a := range list {
		rows, err := s.db.ActivityDeliveries(ctx, a.ID)
		if err != nil {
			return Panel{}, err
		}
		rep := outbox.NewReport(a.IRI, rows)
		short := a.IRI[strings.LastIndex(a.IRI, "/")+1:]
		p.Rows = append(p.Rows, []string{short, a.Type, a.CreatedAt.Format("2006-01-02 15:04"), rep.Summary})
		p.Links = append(p.Links, "/status/deliveries?activity="+url.QueryEscape(a.IRI))
	}
	return p, nil
}

// localPosts counts published objects for NodeInfo.
func (s *Server) localPosts(ctx context.Context) (int, error) {
	n, err := s.db.CountLocalPosts(ctx)
	if err != nil {
		return 0, fmt.Errorf("count posts: %w", err)
	}
	return n, nil
}
