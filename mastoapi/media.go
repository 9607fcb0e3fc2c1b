package mastoapi

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"herald/federation"
	"herald/outbox"
	"herald/store"
)

// uploadMedia serves POST /api/v2/media and /api/v1/media: file, with
// description (alt text) and focus ("x,y"). Herald checks and keeps the
// file at once (outbox.StoreMedia), so the answer is 200 with its URL,
// never Mastodon's 202 of a file still processing.
func (h *Handler) uploadMedia(c *Call) error {
	fh := c.Params.File("file")
	if fh == nil {
		return Errorf(http.StatusUnprocessableEntity, "Validation failed: File can't be blank")
	}
	desc := strings.TrimSpace(c.Params.Get("description"))
	if utf8.RuneCountInString(desc) > outbox.MaxAltText {
		return invalid("Description is too long (maximum is %d characters)", outbox.MaxAltText)
	}
	focus, err := parseFocus(c.Params.Get("focus"))
	if err != nil {
		return err
	}
	f, err := fh.Open()
	if err != nil {
		return err
	}
	m, err := outbox.StoreMedia(c.Ctx(), h.DB, c.Actor, f, desc)
	f.Close()
	if err != nil {
		return uploadError("File", err)
	}
	if focus != "" {
		if err := h.DB.SetMediaDescription(c.Ctx(), c.Actor.ID, m.ID, m.Description, focus); err != nil {
			return err
		}
	}
	return c.JSON(h.mediaEntity(m, focus))
}

// ownMedia is the caller's upload :id.
func (h *Handler) ownMedia(c *Call) (*store.Media, error) {
	id, ok := ParseID(c.param("id"))
	if !ok {
		return nil, ErrNotFound
	}
	m, err := h.DB.MediaByID(c.Ctx(), id)
	if err != nil {
		return nil, err
	}
	if m.ActorID != c.Actor.ID || m.Removed {
		return nil, ErrNotFound
	}
	return m, nil
}

// getMedia serves GET /api/v1/media/:id.
func (h *Handler) getMedia(c *Call) error {
	m, err := h.ownMedia(c)
	if err != nil {
		return err
	}
	focus, err := h.DB.MediaFocus(c.Ctx(), m.ID)
	if err != nil {
		return err
	}
	return c.JSON(h.mediaEntity(m, focus))
}

// updateMedia serves PUT /api/v1/media/:id: description and focus of an
// upload not yet attached (Mastodon finds attached ones not; their alt
// text changes with an edit of the post).
func (h *Handler) updateMedia(c *Call) error {
	m, err := h.ownMedia(c)
	if err != nil {
		return err
	}
	if m.ObjectID != 0 {
		return ErrNotFound
	}
	focus, err := h.DB.MediaFocus(c.Ctx(), m.ID)
	if err != nil {
		return err
	}
	if c.Params.Has("description") {
		m.Description = strings.TrimSpace(c.Params.Get("description"))
		if utf8.RuneCountInString(m.Description) > outbox.MaxAltText {
			return invalid("Description is too long (maximum is %d characters)", outbox.MaxAltText)
		}
	}
	if c.Params.Has("focus") {
		if focus, err = parseFocus(c.Params.Get("focus")); err != nil {
			return err
		}
	}
	if err := h.DB.SetMediaDescription(c.Ctx(), c.Actor.ID, m.ID, m.Description, focus); err != nil {
		return err
	}
	return c.JSON(h.mediaEntity(m, focus))
}

// deleteMedia serves DELETE /api/v1/media/:id: an upload no post uses
// goes, file and all (422 for an attached one, as Mastodon answers).
func (h *Handler) deleteMedia(c *Call) error {
	m, err := h.ownMedia(c)
	if err != nil {
		return err
	}
	if _, err := h.DB.UnattachedMedia(c.Ctx(), c.Actor.ID, m.ID); errors.Is(err, store.ErrNotFound) {
		return Errorf(http.StatusUnprocessableEntity, "Media attachment is currently used by a status")
	} else if err != nil {
		return err
	}
	if dir := h.DB.MediaDir(); dir != "" {
		if err := os.Remove(filepath.Join(dir, m.File)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := h.DB.MarkMediaRemoved(c.Ctx(), m.ID); err != nil {
		return err
	}
	return emptyObject(c)
}

// parseFocus reads a focal point "x,y", each in [-1, 1].
func parseFocus(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	xs, ys, ok := strings.Cut(s, ",")
	x, errX := strconv.ParseFloat(strings.TrimSpace(xs), 64)
	y, errY := strconv.ParseFloat(strings.TrimSpace(ys), 64)
	if !ok || errX != nil || errY != nil || x < -1 || x > 1 || y < -1 || y > 1 {
		return "", invalid("Focus must be two numbers from -1 to 1: x,y")
	}
	return strconv.FormatFloat(x, 'f', -1, 64) + "," + strconv.FormatFloat(y, 'f', -1, 64), nil
}

// mediaEntity is an upload's MediaAttachment.
func (h *Handler) mediaEntity(m *store.Media, focus string) MediaAttachment {
	u := h.Instance.MediaURL(m.File)
	a := MediaAttachment{ID: ID(m.ID), Type: attachmentType(m.MediaType), URL: &u, PreviewURL: &u, Meta: meta(m.Width, m.Height, focus)}
	if m.Description != "" {
		d := m.Description
		a.Description = &d
	}
	if m.Blurhash != "" {
		b := m.Blurhash
		a.Blurhash = &b
	}
	return a
}

// meta is an attachment's meta: its size, and the focal point.
func meta(w, h int, focus string) map[string]any {
	m := map[string]any{}
	if w > 0 && h > 0 {
		size := map[string]any{"width": w, "height": h, "size": fmt.Sprintf("%dx%d", w, h), "aspect": float64(w) / float64(h)}
		m["original"], m["small"] = size, size
	}
	if xs, ys, ok := strings.Cut(focus, ","); ok {
		x, _ := strconv.ParseFloat(xs, 64)
		y, _ := strconv.ParseFloat(ys, 64)
		m["focus"] = map[string]any{"x": x, "y": y}
	}
	return m
}

// attachmentType is Mastodon's type of a file.
func attachmentType(mediaType string) string {
	switch {
	case strings.HasPrefix(mediaType, "image/"):
		return "image"
	case strings.HasPrefix(mediaType, "video/"):
		return "video"
	case strings.HasPrefix(mediaType, "audio/"):
		return "audio"
	}
	return "unknown"
}

// maxRemoteAttachments bounds the attachments shown of one remote status
// (Mastodon keeps 4: Status::MEDIA_ATTACHMENTS_LIMIT), so that every one
// gets an id of its own (remoteAttachmentID).
const maxRemoteAttachments = 16

// remoteAttachmentID is the id of a remote file: its status's, shifted
// past the attachment's position. No two attachments of a status, nor of
// two statuses, share one (the position is under maxRemoteAttachments), and
// none is an upload's (a Snowflake shifted is far beyond a row's id).
// Ids are strings apps do not take apart.
func remoteAttachmentID(statusID int64, i int) string {
	return strconv.FormatInt(statusID*maxRemoteAttachments+int64(i), 10)
}

// attachmentList is the attachment property of obj, as maps.
func attachmentList(obj map[string]any) []map[string]any {
	var out []map[string]any
	for _, v := range asList(obj["attachment"]) {
		if d, ok := v.(map[string]any); ok {
			out = append(out, d)
		}
	}
	return out
}

// attachmentURL is where an attachment's file is, "" if not on the web.
func attachmentURL(d map[string]any) string {
	u := federation.IDOf(d["url"])
	if l, ok := d["url"].([]any); ok && len(l) > 0 {
		if m, ok := l[0].(map[string]any); ok {
			u = federation.FirstString(m["href"])
		}
	}
	if !webURL(u) {
		return ""
	}
	return u
}

// localFiles are the names of the uploads a local status's object shows.
func (h *Handler) localFiles(s *store.Status, obj map[string]any) []string {
	if s.LocalActorID == 0 {
		return nil
	}
	var out []string
	prefix := h.Instance.MediaURL("")
	for _, d := range attachmentList(obj) {
		if file, ok := strings.CutPrefix(attachmentURL(d), prefix); ok {
			out = append(out, file)
		}
	}
	return out
}

// attachments are a status's MediaAttachments: a local upload as
// mediaEntity shows it (uploads, the rows of localFiles, loaded for a
// whole page at once), a remote file as its server serves it.
func (h *Handler) attachments(s *store.Status, obj map[string]any, uploads map[string]store.FocusedMedia) []MediaAttachment {
	out := []MediaAttachment{}
	prefix := h.Instance.MediaURL("")
	for i, d := range attachmentList(obj) {
		u := attachmentURL(d)
		if u == "" {
			continue
		}
		if file, ok := strings.CutPrefix(u, prefix); ok && s.LocalActorID != 0 {
			if m, ok := uploads[file]; ok {
				a := h.mediaEntity(m.Media, m.Focus)
				if alt := federation.FirstString(d["name"]); alt != "" {
					a.Description = &alt
				}
				out = append(out, a)
				continue
			}
		}
		if i >= maxRemoteAttachments {
			continue
		}
		mt := federation.FirstString(d["mediaType"])
		if mt == "" {
			mt = map[string]string{"Image": "image/", "Video": "video/", "Audio": "audio/"}[federation.FirstString(d["type"])]
		}
		a := MediaAttachment{ID: remoteAttachmentID(s.ID, i), Type: attachmentType(mt), URL: &u, PreviewURL: &u, RemoteURL: &u,
			Meta: meta(intOf(d["width"]), intOf(d["height"]), "")}
		if alt := federation.FirstString(d["name"]); alt != "" {
			a.Description = &alt
		}
		if b := federation.FirstString(d["blurhash"]); b != "" {
			a.Blurhash = &b
		}
		out = append(out, a)
	}
	return out
}

// intOf is a JSON number as an int (0 for anything else).
func intOf(v any) int {
	if f, ok := v.(float64); ok && f > 0 && f < 1<<31 {
		return int(f)
	}
	return 0
}
