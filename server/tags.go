package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"herald/federation"
	"herald/outbox/compose"
	"herald/store"
	"herald/web/templates"
)

// tagPage serves /tags/{name}, where the Hashtag links of local posts
// lead: the newest public posts with that hashtag.
func (s *Server) tagPage(w http.ResponseWriter, r *http.Request) {
	name := compose.NormalizeHashtag(chi.URLParam(r, "name"))
	if name == "" {
		s.writeError(w, r, http.StatusNotFound, "No such hashtag.")
		return
	}
	list, err := s.db.TaggedObjects(r.Context(), name, 40)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	posts, err := s.postsOf(r.Context(), list)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	s.pages.Render(w, "tag.html", map[string]any{"Domain": s.inst.Domain, "Tag": name, "Posts": posts})
}

// profilePost is a public post as the profile and tag pages list it.
type profilePost struct {
	URL, Published, Summary, Author string
	Paragraphs                      []string
	Attachments                     []templates.Attachment
	Pinned                          bool
}

// postsOf renders objects as plain text, skipping repeats.
func (s *Server) postsOf(ctx context.Context, objects []store.Object) ([]profilePost, error) {
	var out []profilePost
	seen := map[int64]bool{}
	names := map[int64]string{}
	for _, o := range objects {
		if seen[o.ID] {
			continue
		}
		seen[o.ID] = true
		var doc map[string]any
		if err := json.Unmarshal([]byte(o.Body), &doc); err != nil {
			return nil, err
		}
		if _, ok := names[o.ActorID]; !ok {
			if a, err := s.db.ActorByID(ctx, o.ActorID); err == nil {
				names[o.ActorID] = "@" + a.Name + "@" + s.inst.Domain
			}
		}
		out = append(out, profilePost{
			URL: o.IRI, Published: o.CreatedAt.Format("2 January 2006 15:04"), Pinned: o.Pinned, Author: names[o.ActorID],
			Summary:     strings.Join(templates.PlainParagraphs(federation.FirstString(doc["summary"])), " "),
			Paragraphs:  templates.PlainParagraphs(federation.FirstString(doc["content"])),
			Attachments: templates.Attachments(doc),
		})
	}
	return out, nil
}
