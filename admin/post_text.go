package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"herald/federation"
	"herald/store"
	"herald/web/templates"
)

// postView is what the posts pages show of an activity besides where it
// went: who sent it, to whom, and what it says.
type postView struct {
	Author   string // @name, or the instance actor
	Audience string // public, unlisted, followers, or whom it was addressed to
	Text     string // the text of a post it creates or updates, else what it is about
	Warning  string // a content warning (summary)
	// Attachments are the post's files, with their descriptions.
	Attachments []templates.Attachment
}

// maxExcerpt bounds the text a list shows of a post, in characters.
const maxExcerpt = 280

// describe reads an activity's author, audience and text; names caches
// the actors' names. A body it cannot read says so rather than failing
// the page.
func (h *Handler) describe(ctx context.Context, a *store.Activity, names map[int64]string, excerpt bool) postView {
	var v postView
	if _, ok := names[a.ActorID]; !ok {
		names[a.ActorID] = "the instance actor"
		if a.ActorID != 0 {
			if actor, err := h.db.ActorByID(ctx, a.ActorID); err == nil {
				names[a.ActorID] = "@" + actor.Name
			}
		}
	}
	v.Author = names[a.ActorID]
	var doc map[string]any
	if err := json.Unmarshal([]byte(a.Body), &doc); err != nil {
		v.Text = "(unreadable: " + err.Error() + ")"
		return v
	}
	v.Audience = audienceOf(doc)
	obj := federation.Object(doc["object"])
	switch {
	case obj != nil && federation.FirstString(obj["content"]) != "":
		v.Text = strings.Join(templates.PlainParagraphs(federation.FirstString(obj["content"])), "\n\n")
		v.Warning = federation.FirstString(obj["summary"])
		v.Attachments = templates.Attachments(obj)
	case obj != nil && federation.IsActorType(federation.FirstString(obj["type"])):
		v.Text = "the profile of " + federation.IDOf(obj)
	default:
		v.Text = federation.IDOf(doc["object"])
		if t := federation.IDOf(doc["target"]); t != "" {
			v.Text += " → " + t
		}
	}
	if excerpt && utf8.RuneCountInString(v.Text) > maxExcerpt {
		v.Text = string([]rune(v.Text)[:maxExcerpt]) + "…"
	}
	return v
}

// audienceOf says whom an activity was addressed to, in Mastodon's words
// where they fit: public (as:Public in to), unlisted (in cc), followers
// (the author's followers and no one public), or the people named.
func audienceOf(doc map[string]any) string {
	to, cc := federation.IDs(doc["to"]), federation.IDs(doc["cc"])
	switch {
	case slices.ContainsFunc(to, federation.IsPublic):
		return "public"
	case slices.ContainsFunc(cc, federation.IsPublic):
		return "unlisted"
	}
	var people []string
	followers := false
	for _, id := range append(to, cc...) {
		if strings.HasSuffix(id, "/followers") {
			followers = true
			continue
		}
		people = append(people, id)
	}
	switch {
	case followers && len(people) == 0:
		return "followers"
	case followers:
		return fmt.Sprintf("followers and %s", named(people))
	case len(people) > 0:
		return named(people)
	}
	return "nobody named"
}

// named lists people, the first three in full.
func named(people []string) string {
	if len(people) <= 3 {
		return strings.Join(people, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(people[:3], ", "), len(people)-3)
}
